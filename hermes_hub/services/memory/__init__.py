"""Long-term memory: what each user asked the hub to remember, found again by recall together with
their past conversations (see ``memories.Memories``)."""

from hermes_hub.services.memory.memories import Memories
from hermes_hub.services.memory.recall import RecallQuery

__all__ = ["Memories", "RecallQuery"]
