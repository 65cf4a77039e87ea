"""The ``SessionStore``, ``MessageStore`` and ``SessionLockStore`` parts of both backends.

The SQL behind them differs (SQLite checks and appends in one writer's transaction, PostgreSQL calls
``hermes_append``; FTS5 vs pg_trgm search) but not how a method reaches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.locks import Lease, hold
from hermes_hub.infra.storage.records import MessageRecord, NewMessage, SearchHit, SessionRecord


class SessionMethods(Runner):
    async def create_session(self, record: SessionRecord) -> None:
        await self._write(self._sql.sessions.insert_session, record)

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        return await self._read(self._sql.sessions.get_session, user_id, session_id)

    async def list_sessions(self, user_id: str, *, limit: int,
                            after: tuple[datetime, str] | None = None) -> list[SessionRecord]:
        return await self._read(self._sql.sessions.list_sessions, user_id, limit, after)

    async def update_session(self, user_id: str, session_id: str, *, updated_at: datetime,
                             title: str | None = None, summary: str | None = None) -> SessionRecord:
        return await self._write(self._sql.sessions.update_session, user_id, session_id, updated_at, title, summary)

    async def delete_session(self, user_id: str, session_id: str) -> None:
        await self._write(self._sql.sessions.delete_session, user_id, session_id)

    async def delete_user_sessions(self, user_id: str) -> int:
        return await self._write(self._sql.sessions.delete_user_sessions, user_id)


class MessageMethods(Runner):
    async def append_messages(self, user_id: str, session_id: str, messages: Sequence[NewMessage], *,
                              lease: Lease | None = None) -> list[MessageRecord]:
        return await self._write(self._sql.sessions.append_messages, user_id, session_id, list(messages), lease)

    async def import_session(self, record: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
        return await self._write(self._sql.sessions.import_session, record, list(messages))

    async def list_messages(self, user_id: str, session_id: str, *, limit: int, after_seq: int | None = None,
                            before_seq: int | None = None, newest_first: bool = False) -> list[MessageRecord]:
        return await self._read(self._sql.sessions.list_messages, user_id, session_id, limit, after_seq, before_seq,
                                newest_first)

    async def search_messages(self, user_id: str, query: str, *, limit: int,
                              session_id: str | None = None) -> list[SearchHit]:
        return await self._read(self._sql.sessions.search_messages, user_id, query, limit, session_id)


class SessionLockMethods(Runner):
    async def acquire_session_lock(self, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
        return await self._write(self._sql.sessions.acquire_lock, user_id, session_id, owner, ttl)

    async def renew_session_lock(self, session_id: str, owner: str, ttl: float) -> bool:
        return await self._write(self._sql.sessions.renew_lock, session_id, owner, ttl)

    async def release_session_lock(self, session_id: str, owner: str) -> None:
        await self._write(self._sql.sessions.release_lock, session_id, owner)

    def session_lock(self, user_id: str, session_id: str, *, ttl: float = 30.0) -> AbstractAsyncContextManager[Lease]:
        return hold(self, user_id, session_id, ttl)  # type: ignore[arg-type]
