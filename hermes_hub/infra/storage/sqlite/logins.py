"""SQL of the status page's login sessions, found by the hash of the id in the browser's cookie."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import LoginRecord
from hermes_hub.infra.storage.rows import LOGIN_COLS, login_record, ts

Connection = Any


def add_login(db: Connection, rec: LoginRecord) -> None:
    db.execute(f"INSERT INTO status_logins ({LOGIN_COLS}) VALUES (?, ?, ?, ?, ?)",
               (rec.id_hash, rec.token_hash, rec.user_id, ts(rec.created_at), ts(rec.seen_at)))


def find_login(db: Connection, id_hash: str) -> LoginRecord | None:
    row = db.execute(f"SELECT {LOGIN_COLS} FROM status_logins WHERE id_hash = ?", (id_hash,)).fetchone()
    return login_record(row) if row else None


def touch_login(db: Connection, id_hash: str, at: datetime) -> None:
    db.execute("UPDATE status_logins SET seen_at = ? WHERE id_hash = ?", (ts(at), id_hash))


def delete_login(db: Connection, id_hash: str) -> bool:
    return db.execute("DELETE FROM status_logins WHERE id_hash = ?", (id_hash,)).rowcount == 1


def prune_logins(db: Connection, seen_before: datetime, created_before: datetime) -> int:
    return db.execute("DELETE FROM status_logins WHERE seen_at < ? OR created_at < ?",
                      (ts(seen_before), ts(created_before))).rowcount
