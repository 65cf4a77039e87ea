"""The ``OAuthStore`` part of both backends: the hub's own OAuth clients, grants and secrets (hashes)."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord


class OAuthMethods(Runner):
    async def add_oauth_client(self, client_id: str, info: str, *, at: datetime) -> None:
        await self._write(self._sql.oauth.add_oauth_client, client_id, info, at)

    async def find_oauth_client(self, client_id: str) -> str | None:
        return await self._read(self._sql.oauth.find_oauth_client, client_id)

    async def add_oauth_grant(self, record: OAuthGrantRecord) -> None:
        await self._write(self._sql.oauth.add_oauth_grant, record)

    async def find_oauth_grant(self, grant_id: str) -> OAuthGrantRecord | None:
        return await self._read(self._sql.oauth.find_oauth_grant, grant_id)

    async def list_oauth_grants(self, user_id: str | None = None) -> list[OAuthGrantRecord]:
        return await self._read(self._sql.oauth.list_oauth_grants, user_id)

    async def revoke_oauth_grant(self, grant_id: str, *, at: datetime) -> bool:
        return await self._write(self._sql.oauth.revoke_oauth_grant, grant_id, at)

    async def add_oauth_token(self, record: OAuthTokenRecord) -> None:
        await self._write(self._sql.oauth.add_oauth_token, record)

    async def find_oauth_token(self, token_hash: str) -> tuple[OAuthTokenRecord, OAuthGrantRecord | None] | None:
        return await self._read(self._sql.oauth.find_oauth_token, token_hash)

    async def spend_oauth_token(self, token_hash: str, *, at: datetime) -> bool:
        return await self._write(self._sql.oauth.spend_oauth_token, token_hash, at)

    async def delete_oauth_token(self, token_hash: str) -> bool:
        return await self._write(self._sql.oauth.delete_oauth_token, token_hash)

    async def prune_oauth_tokens(self, *, expired_before: datetime) -> int:
        return await self._write(self._sql.oauth.prune_oauth_tokens, expired_before)
