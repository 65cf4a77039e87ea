"""PostgreSQL SQL of the hub's own OAuth (SQLite's ``oauth``): registered clients, grants and the hashes
of the flow's secrets. Async functions of a connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord
from hermes_hub.infra.storage.rows import GRANT_COLS, OAUTH_TOKEN_COLS, grant_record, oauth_token_record, ts

Connection = Any


async def add_oauth_client(db: Connection, client_id: str, info: str, at: datetime) -> None:
    await db.execute("INSERT INTO oauth_clients (client_id, info, created_at) VALUES ($1, $2, $3) "
                     "ON CONFLICT (client_id) DO UPDATE SET info = excluded.info", client_id, info, ts(at))


async def find_oauth_client(db: Connection, client_id: str) -> str | None:
    return await db.fetchval("SELECT info FROM oauth_clients WHERE client_id = $1", client_id)


async def add_oauth_grant(db: Connection, g: OAuthGrantRecord) -> None:
    await db.execute(f"INSERT INTO oauth_grants ({GRANT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                     g.id, g.user_id, g.role, g.client_id, g.client_name, g.resource, g.scopes, ts(g.created_at),
                     ts(g.revoked_at) if g.revoked_at else None)


async def find_oauth_grant(db: Connection, grant_id: str) -> OAuthGrantRecord | None:
    row = await db.fetchrow(f"SELECT {GRANT_COLS} FROM oauth_grants WHERE id = $1", grant_id)
    return grant_record(tuple(row)) if row else None


async def list_oauth_grants(db: Connection, user_id: str | None) -> list[OAuthGrantRecord]:
    if user_id is None:
        rows = await db.fetch(f"SELECT {GRANT_COLS} FROM oauth_grants ORDER BY created_at, id")
    else:
        rows = await db.fetch(f"SELECT {GRANT_COLS} FROM oauth_grants WHERE user_id = $1 ORDER BY created_at, id",
                              user_id)
    return [grant_record(tuple(r)) for r in rows]


async def revoke_oauth_grant(db: Connection, grant_id: str, at: datetime) -> bool:
    row = await db.fetchrow("UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL "
                            "RETURNING 1", ts(at), grant_id)
    return row is not None


async def add_oauth_token(db: Connection, t: OAuthTokenRecord) -> None:
    await db.execute(f"INSERT INTO oauth_tokens ({OAUTH_TOKEN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                     t.token_hash, t.kind, t.grant_id, t.client_id, t.data, ts(t.created_at), ts(t.expires_at),
                     ts(t.used_at) if t.used_at else None)


async def find_oauth_token(db: Connection, token_hash: str) -> tuple[OAuthTokenRecord, OAuthGrantRecord | None] | None:
    row = await db.fetchrow(f"SELECT {OAUTH_TOKEN_COLS} FROM oauth_tokens WHERE token_hash = $1", token_hash)
    if row is None:
        return None
    token = oauth_token_record(tuple(row))
    return token, await find_oauth_grant(db, token.grant_id) if token.grant_id else None


async def spend_oauth_token(db: Connection, token_hash: str, at: datetime) -> bool:
    row = await db.fetchrow("UPDATE oauth_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL "
                            "RETURNING 1", ts(at), token_hash)
    return row is not None


async def delete_oauth_token(db: Connection, token_hash: str) -> bool:
    return await db.fetchrow("DELETE FROM oauth_tokens WHERE token_hash = $1 RETURNING 1", token_hash) is not None


async def prune_oauth_tokens(db: Connection, expired_before: datetime) -> int:
    rows = await db.fetch("DELETE FROM oauth_tokens WHERE expires_at < $1 RETURNING 1", ts(expired_before))
    return len(rows)
