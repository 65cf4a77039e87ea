"""The ``MemoryStore`` and ``RecallStore`` parts of both backends: memories, their history, and the
reads recall makes (lexical matches, nearest vectors, the rows they point at)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import MemoryEvent, MemoryRecord, RankedRow


class MemoryMethods(Runner):
    async def add_memory(self, record: MemoryRecord, event: MemoryEvent, *, key: str,
                         supersedes: str | None = None) -> None:
        await self._write(self._sql.memories.insert_memory, record, key, event, supersedes)

    async def find_duplicate_memory(self, user_id: str, key: str) -> str | None:
        return await self._read(self._sql.memories.find_duplicate, user_id, key)

    async def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord:
        return await self._read(self._sql.memories.get_memory, user_id, memory_id)

    async def list_memories(self, user_id: str, *, state: str | None = None, kind: str | None = None,
                            limit: int = 50, before_pk: int | None = None,
                            include_superseded: bool = True) -> list[tuple[int, MemoryRecord]]:
        return await self._read(self._sql.memories.list_memories, user_id, state, kind, limit, before_pk,
                                include_superseded)

    async def set_memory_state(self, user_id: str, memory_id: str, state: str, event: MemoryEvent) -> MemoryRecord:
        return await self._write(self._sql.memories.set_state, user_id, memory_id, state, event)

    async def archive_idle_memories(self, before: datetime, *, at: datetime) -> int:
        return await self._write(self._sql.memories.archive_idle, before.timestamp(), at.timestamp())

    async def delete_memories(self, user_id: str, memory_id: str | None = None) -> int:
        return await self._write(self._sql.memories.delete_memories, user_id, memory_id)

    async def touch_memories(self, user_id: str, memory_ids: Sequence[str], *, at: datetime) -> None:
        await self._write(self._sql.memories.touch, user_id, list(memory_ids), at.timestamp())

    async def count_memories(self, user_id: str | None = None) -> dict[str, int]:
        return await self._read(self._sql.memories.count_memories, user_id)

    async def memory_events(self, user_id: str, memory_id: str) -> list[MemoryEvent]:
        return await self._read(self._sql.memories.list_events, user_id, memory_id)


class RecallMethods(Runner):
    async def lexical_search(self, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
        return await self._read(self._sql.memories.lexical, source, user_id, match, limit)

    async def messages_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        return await self._read(self._sql.memories.messages_by_pk, user_id, list(pks))

    async def memories_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
        return await self._read(self._sql.memories.memories_by_pk, user_id, list(pks))

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        return await self._read(self._sql.vectors.nearest, table, user_id, vector, k)

    async def index_mark(self, mark: str) -> int:
        return await self._read(self._sql.indexing.mark, mark)

    async def vectors_between(self, table: str, user_id: str, after_pk: int, upto_pk: int) -> list[tuple[int, bytes]]:
        return await self._read(self._sql.vectors.vectors_between, table, user_id, after_pk, upto_pk)
