"""SQL for who may call and who called: API tokens and status-page logins (hashes only), audit rows."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hermes_hub.storage.records import AuditRecord, LoginRecord, TokenRecord
from hermes_hub.storage.sqlite_sessions import dt, ts

Connection = Any
_TOKEN_COLS = "id, token_hash, user_id, role, name, created_at, revoked_at"
_AUDIT_COLS = "id, at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, result_size, run_id"


def _token(row: tuple[Any, ...]) -> TokenRecord:
    tid, h, uid, role, name, created, revoked = row
    return TokenRecord(tid, h, uid, role, name, dt(created), dt(revoked) if revoked is not None else None)


def add_token(db: Connection, rec: TokenRecord) -> None:
    db.execute(f"INSERT INTO api_tokens ({_TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (rec.id, rec.token_hash, rec.user_id, rec.role, rec.name, ts(rec.created_at),
                ts(rec.revoked_at) if rec.revoked_at else None))


def find_token(db: Connection, token_hash: str) -> TokenRecord | None:
    row = db.execute(f"SELECT {_TOKEN_COLS} FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL",
                     (token_hash,)).fetchone()
    return _token(row) if row else None


def list_tokens(db: Connection, user_id: str | None) -> list[TokenRecord]:
    if user_id is None:
        rows = db.execute(f"SELECT {_TOKEN_COLS} FROM api_tokens ORDER BY created_at, id")
    else:
        rows = db.execute(f"SELECT {_TOKEN_COLS} FROM api_tokens WHERE user_id = ? ORDER BY created_at, id",
                          (user_id,))
    return [_token(r) for r in rows]


def revoke_token(db: Connection, token_id: str, at: datetime) -> bool:
    cur = db.execute("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (ts(at), token_id))
    return cur.rowcount == 1


def login(row: tuple[Any, ...]) -> LoginRecord:
    id_hash, token_hash, uid, created, seen = row
    return LoginRecord(id_hash, token_hash, uid, dt(created), dt(seen))


LOGIN_COLS = "id_hash, token_hash, user_id, created_at, seen_at"


def add_login(db: Connection, rec: LoginRecord) -> None:
    db.execute(f"INSERT INTO status_logins ({LOGIN_COLS}) VALUES (?, ?, ?, ?, ?)",
               (rec.id_hash, rec.token_hash, rec.user_id, ts(rec.created_at), ts(rec.seen_at)))


def find_login(db: Connection, id_hash: str) -> LoginRecord | None:
    row = db.execute(f"SELECT {LOGIN_COLS} FROM status_logins WHERE id_hash = ?", (id_hash,)).fetchone()
    return login(row) if row else None


def touch_login(db: Connection, id_hash: str, at: datetime) -> None:
    db.execute("UPDATE status_logins SET seen_at = ? WHERE id_hash = ?", (ts(at), id_hash))


def delete_login(db: Connection, id_hash: str) -> bool:
    return db.execute("DELETE FROM status_logins WHERE id_hash = ?", (id_hash,)).rowcount == 1


def prune_logins(db: Connection, seen_before: datetime, created_before: datetime) -> int:
    return db.execute("DELETE FROM status_logins WHERE seen_at < ? OR created_at < ?",
                      (ts(seen_before), ts(created_before))).rowcount


def add_audit(db: Connection, rec: AuditRecord) -> int:
    cur = db.execute(
        "INSERT INTO audit (at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, "
        "result_size, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (ts(rec.at), rec.user_id, rec.session_id, rec.tool, rec.server,
         json.dumps(rec.arguments, ensure_ascii=False, default=str), rec.outcome, rec.error, rec.duration_ms,
         rec.result_size, rec.run_id))
    return int(cur.lastrowid)


def query_audit(db: Connection, user_id: str | None, tool: str | None, since: datetime | None,
                limit: int) -> list[AuditRecord]:
    where, args = [], []
    for column, value in (("user_id = ?", user_id), ("tool = ?", tool), ("at >= ?", since and ts(since))):
        if value is not None:
            where.append(column)
            args.append(value)
    sql = f"SELECT {_AUDIT_COLS} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY at DESC, id DESC LIMIT ?"
    out = []
    for aid, at, uid, sid, tool_, server, arguments, outcome, error, ms, size, run in db.execute(sql, [*args, limit]):
        out.append(AuditRecord(dt(at), uid, tool_, outcome, ms, server, sid, json.loads(arguments), error, size, aid,
                               run))
    return out


def prune_audit(db: Connection, before: datetime) -> int:
    return db.execute("DELETE FROM audit WHERE at < ?", (ts(before),)).rowcount
