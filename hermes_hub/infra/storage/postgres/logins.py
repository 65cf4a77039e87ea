"""PostgreSQL SQL of the status page's login sessions, found by the hash of their id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import LoginRecord
from hermes_hub.infra.storage.rows import LOGIN_COLS, login_record, ts

Connection = Any


async def add_login(db: Connection, rec: LoginRecord) -> None:
    await db.execute(f"INSERT INTO status_logins ({LOGIN_COLS}) VALUES ($1, $2, $3, $4, $5)",
                     rec.id_hash, rec.token_hash, rec.user_id, ts(rec.created_at), ts(rec.seen_at))


async def find_login(db: Connection, id_hash: str) -> LoginRecord | None:
    row = await db.fetchrow(f"SELECT {LOGIN_COLS} FROM status_logins WHERE id_hash = $1", id_hash)
    return login_record(tuple(row)) if row else None


async def touch_login(db: Connection, id_hash: str, at: datetime) -> None:
    await db.execute("UPDATE status_logins SET seen_at = $1 WHERE id_hash = $2", ts(at), id_hash)


async def delete_login(db: Connection, id_hash: str) -> bool:
    return await db.fetchrow("DELETE FROM status_logins WHERE id_hash = $1 RETURNING 1", id_hash) is not None


async def prune_logins(db: Connection, seen_before: datetime, created_before: datetime) -> int:
    rows = await db.fetch("DELETE FROM status_logins WHERE seen_at < $1 OR created_at < $2 RETURNING 1",
                          ts(seen_before), ts(created_before))
    return len(rows)
