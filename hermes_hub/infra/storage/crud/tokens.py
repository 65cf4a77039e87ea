"""The ``TokenStore`` part of both backends: API tokens, kept as hashes."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import TokenRecord


class TokenMethods(Runner):
    async def add_token(self, record: TokenRecord) -> None:
        await self._write(self._sql.tokens.add_token, record)

    async def find_token(self, token_hash: str) -> TokenRecord | None:
        return await self._read(self._sql.tokens.find_token, token_hash)

    async def list_tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        return await self._read(self._sql.tokens.list_tokens, user_id)

    async def revoke_token(self, token_id: str, *, at: datetime) -> bool:
        return await self._write(self._sql.tokens.revoke_token, token_id, at)
