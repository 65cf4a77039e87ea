"""The ``PinStore`` part of both backends: pinned tool definitions and the changes seen in their place."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from hermes_hub.infra.errors import StorageError
from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.pins import MAX_APPROVED_DIGESTS
from hermes_hub.infra.storage.records import PinRecord


class PinMethods(Runner):
    async def list_pins(self, server: str | None = None) -> list[PinRecord]:
        return await self._read(self._sql.pins.list_pins, server)

    async def add_pins(self, records: Sequence[PinRecord]) -> int:
        return await self._write(self._sql.pins.add_pins, list(records)) if records else 0

    async def note_seen(self, server: str, tool: str, digest: str | None, definition: dict[str, Any] | None, *,
                        at: datetime) -> None:
        await self._write(self._sql.pins.note_seen, server, tool, digest, definition, at)

    async def approve_pins(self, server: str, tool: str | None, *, digests: Collection[str], by: str,
                           at: datetime) -> list[PinRecord]:
        wanted = sorted(set(digests))
        if len(wanted) > MAX_APPROVED_DIGESTS:
            raise StorageError(f"one approval may name at most {MAX_APPROVED_DIGESTS} digests, not {len(wanted)}; "
                               f"approve the tools one by one")
        return await self._write(self._sql.pins.approve_pins, server, tool, wanted, by, at) if wanted else []

    async def upgrade_pins(self, records: Sequence[tuple[str, PinRecord]]) -> int:
        return await self._write(self._sql.pins.upgrade_pins, list(records)) if records else 0
