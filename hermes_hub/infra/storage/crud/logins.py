"""The ``LoginStore`` part of both backends: status-page login sessions, found by the hash of their id."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import LoginRecord


class LoginMethods(Runner):
    async def add_login(self, record: LoginRecord) -> None:
        await self._write(self._sql.logins.add_login, record)

    async def find_login(self, id_hash: str) -> LoginRecord | None:
        return await self._read(self._sql.logins.find_login, id_hash)

    async def touch_login(self, id_hash: str, *, at: datetime) -> None:
        await self._write(self._sql.logins.touch_login, id_hash, at)

    async def delete_login(self, id_hash: str) -> bool:
        return await self._write(self._sql.logins.delete_login, id_hash)

    async def prune_logins(self, *, seen_before: datetime, created_before: datetime) -> int:
        return await self._write(self._sql.logins.prune_logins, seen_before, created_before)
