"""The ``LoginStore`` part of both backends: status-page login sessions, found by the hash of their id.

Each backend mixes ``LoginMethods`` in and names its SQL module (``sqlite_audit`` or ``postgres_audit``,
which hold the same functions) and how it runs a read and a write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.storage.records import LoginRecord


class LoginMethods:
    _login_sql: Any  # the backend's module of login SQL functions
    _read: Any
    _write: Any

    async def add_login(self, record: LoginRecord) -> None:
        await self._write(self._login_sql.add_login, record)

    async def find_login(self, id_hash: str) -> LoginRecord | None:
        return await self._read(self._login_sql.find_login, id_hash)

    async def touch_login(self, id_hash: str, *, at: datetime) -> None:
        await self._write(self._login_sql.touch_login, id_hash, at)

    async def delete_login(self, id_hash: str) -> bool:
        return await self._write(self._login_sql.delete_login, id_hash)

    async def prune_logins(self, *, seen_before: datetime, created_before: datetime) -> int:
        return await self._write(self._login_sql.prune_logins, seen_before, created_before)
