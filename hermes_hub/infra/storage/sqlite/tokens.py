"""SQL of API tokens (their hashes only): plain functions of a connection, run by ``SQLiteStore``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import TokenRecord
from hermes_hub.infra.storage.rows import TOKEN_COLS, token_record, ts

Connection = Any


def add_token(db: Connection, rec: TokenRecord) -> None:
    db.execute(f"INSERT INTO api_tokens ({TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (rec.id, rec.token_hash, rec.user_id, rec.role, rec.name, ts(rec.created_at),
                ts(rec.revoked_at) if rec.revoked_at else None))


def find_token(db: Connection, token_hash: str) -> TokenRecord | None:
    row = db.execute(f"SELECT {TOKEN_COLS} FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL",
                     (token_hash,)).fetchone()
    return token_record(row) if row else None


def list_tokens(db: Connection, user_id: str | None) -> list[TokenRecord]:
    if user_id is None:
        rows = db.execute(f"SELECT {TOKEN_COLS} FROM api_tokens ORDER BY created_at, id")
    else:
        rows = db.execute(f"SELECT {TOKEN_COLS} FROM api_tokens WHERE user_id = ? ORDER BY created_at, id",
                          (user_id,))
    return [token_record(r) for r in rows]


def revoke_token(db: Connection, token_id: str, at: datetime) -> bool:
    cur = db.execute("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (ts(at), token_id))
    return cur.rowcount == 1
