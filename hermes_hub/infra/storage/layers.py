"""The store's part of memory's layers beside long-term memory: provenance and working memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class ProvenanceStore(Protocol):
    """Which of the user's messages a memory was written from (links go with the memory and the message)."""

    async def source_messages(self, user_id: str, message_ids: Sequence[str]) -> list[tuple[str, str, Any]]:
        """(id, session_id, created_at) of those ``message_ids`` that are the user's, in append order."""

    async def memories_of_messages(self, user_id: str, message_pks: Sequence[int]) -> list[tuple[int, int]]:
        """(message pk, memory pk) of each memory written from one of the user's messages."""

    async def memories_only_from_session(self, user_id: str, session_id: str) -> list[str]:
        """Ids of the user's memories written from that session's messages and no other session's."""


class WorkingStore(Protocol):
    """Each session's working memory: one text, the caller's own, gone with its session."""

    async def get_working(self, user_id: str, session_id: str) -> tuple[str, float | None]:
        """(text, updated_at as a timestamp); ('', None) when empty; ``NotFound`` for another's session."""

    async def set_working(self, user_id: str, session_id: str, text: str) -> None:
        """Replace it; an empty text clears it."""
