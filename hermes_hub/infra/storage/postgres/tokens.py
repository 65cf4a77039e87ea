"""PostgreSQL SQL of API tokens (their hashes only): async functions of a connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import TokenRecord
from hermes_hub.infra.storage.rows import TOKEN_COLS, token_record, ts

Connection = Any


async def add_token(db: Connection, rec: TokenRecord) -> None:
    await db.execute(f"INSERT INTO api_tokens ({TOKEN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                     rec.id, rec.token_hash, rec.user_id, rec.role, rec.name, ts(rec.created_at),
                     ts(rec.revoked_at) if rec.revoked_at else None)


async def find_token(db: Connection, token_hash: str) -> TokenRecord | None:
    row = await db.fetchrow(f"SELECT {TOKEN_COLS} FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
                            token_hash)
    return token_record(tuple(row)) if row else None


async def list_tokens(db: Connection, user_id: str | None) -> list[TokenRecord]:
    if user_id is None:
        rows = await db.fetch(f"SELECT {TOKEN_COLS} FROM api_tokens ORDER BY created_at, id")
    else:
        rows = await db.fetch(f"SELECT {TOKEN_COLS} FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id",
                              user_id)
    return [token_record(tuple(r)) for r in rows]


async def revoke_token(db: Connection, token_id: str, at: datetime) -> bool:
    row = await db.fetchrow("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING 1",
                            ts(at), token_id)
    return row is not None
