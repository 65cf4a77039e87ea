"""The memory-layer parts of both backends: where a memory came from (``ProvenanceStore``) and each
session's working memory (``WorkingStore``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.crud.runner import Runner


class ProvenanceMethods(Runner):
    async def source_messages(self, user_id: str, message_ids: Sequence[str]) -> list[tuple[str, str, Any]]:
        return await self._read(self._sql.provenance.source_messages, user_id, list(message_ids))

    async def memories_of_messages(self, user_id: str, message_pks: Sequence[int]) -> list[tuple[int, int]]:
        return await self._read(self._sql.provenance.memories_of_messages, user_id, list(message_pks))

    async def memories_only_from_session(self, user_id: str, session_id: str) -> list[str]:
        return await self._read(self._sql.provenance.only_from_session, user_id, session_id)


class WorkingMethods(Runner):
    async def get_working(self, user_id: str, session_id: str) -> tuple[str, float | None]:
        return await self._read(self._sql.working.get_working, user_id, session_id)

    async def set_working(self, user_id: str, session_id: str, text: str) -> None:
        await self._write(self._sql.working.set_working, user_id, session_id, text, time.time())
