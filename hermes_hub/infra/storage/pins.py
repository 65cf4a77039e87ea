"""The ``PinStore`` protocol: pinned tool definitions (``hermes_hub.core.aggregation.pins``), hub-wide, one row per tool.

Every write that moves a pin is conditional on what the row holds, so two processes (a serving hub and
``hermes-hub tools approve``) never pin a definition nobody looked at: ``approve_pins`` pins the changed
definition seen only while its digest is one the admin named, ``upgrade_pins`` re-pins a legacy pin only
while the row still holds it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Protocol

from hermes_hub.infra.storage.records import PinRecord

MAX_APPROVED_DIGESTS = 1000  # digests one approve may name (a server's changed tools)


class PinStore(Protocol):
    """Pinned tool definitions (``hermes-hub tools pin``, ``hub.pin: "auto"``): hub-wide, one row per tool."""

    async def list_pins(self, server: str | None = None) -> list[PinRecord]:
        """Every pin (of ``server``), by server and tool."""

    async def add_pins(self, records: Sequence[PinRecord]) -> int:
        """Insert the pins of tools not pinned yet (a pinned one keeps its row); return how many were new."""

    async def note_seen(self, server: str, tool: str, digest: str | None, definition: dict[str, Any] | None, *,
                        at: datetime) -> None:
        """Record the changed definition a hub sees in place of the pinned one (``None``: it sends the pinned one
        again)."""

    async def approve_pins(self, server: str, tool: str | None, *, digests: Collection[str], by: str,
                           at: datetime) -> list[PinRecord]:
        """Pin the changed definition last seen of ``server``'s ``tool`` (None: each of its tools), each only if
        its digest is in ``digests`` (in the same statement: a definition seen since is not pinned); return the
        new pins."""

    async def upgrade_pins(self, records: Sequence[tuple[str, PinRecord]]) -> int:
        """For each (legacy digest, new pin): replace the row's digest and definition with the new pin's (and
        clear what was seen), keeping who pinned it and when, only while the row still holds that legacy
        digest; return how many rows changed."""
