"""PostgreSQL SQL for API tokens, status-page logins, audit rows and agent runs (same rows as
``sqlite_audit``/``sqlite_runs``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hermes_hub.errors import NotFound
from hermes_hub.storage.records import AuditRecord, LoginRecord, RunRecord, TokenRecord
from hermes_hub.storage.sqlite_audit import LOGIN_COLS, _token, login
from hermes_hub.storage.sqlite_runs import _run
from hermes_hub.storage.sqlite_sessions import dt, ts

Connection = Any
_TOKEN_COLS = "id, token_hash, user_id, role, name, created_at, revoked_at"
_AUDIT_COLS = "id, at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, result_size, run_id"
_RUN_COLS = ("run_id, user_id, session_id, profile, task, started_at, ended_at, stop_reason, rounds, input_tokens, "
             "output_tokens, answer, trace, rating, comment")


async def add_token(db: Connection, rec: TokenRecord) -> None:
    await db.execute(f"INSERT INTO api_tokens ({_TOKEN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                     rec.id, rec.token_hash, rec.user_id, rec.role, rec.name, ts(rec.created_at),
                     ts(rec.revoked_at) if rec.revoked_at else None)


async def find_token(db: Connection, token_hash: str) -> TokenRecord | None:
    row = await db.fetchrow(f"SELECT {_TOKEN_COLS} FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
                            token_hash)
    return _token(tuple(row)) if row else None


async def list_tokens(db: Connection, user_id: str | None) -> list[TokenRecord]:
    if user_id is None:
        rows = await db.fetch(f"SELECT {_TOKEN_COLS} FROM api_tokens ORDER BY created_at, id")
    else:
        rows = await db.fetch(f"SELECT {_TOKEN_COLS} FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id",
                              user_id)
    return [_token(tuple(r)) for r in rows]


async def revoke_token(db: Connection, token_id: str, at: datetime) -> bool:
    row = await db.fetchrow("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING 1",
                            ts(at), token_id)
    return row is not None


async def add_login(db: Connection, rec: LoginRecord) -> None:
    await db.execute(f"INSERT INTO status_logins ({LOGIN_COLS}) VALUES ($1, $2, $3, $4, $5)",
                     rec.id_hash, rec.token_hash, rec.user_id, ts(rec.created_at), ts(rec.seen_at))


async def find_login(db: Connection, id_hash: str) -> LoginRecord | None:
    row = await db.fetchrow(f"SELECT {LOGIN_COLS} FROM status_logins WHERE id_hash = $1", id_hash)
    return login(tuple(row)) if row else None


async def touch_login(db: Connection, id_hash: str, at: datetime) -> None:
    await db.execute("UPDATE status_logins SET seen_at = $1 WHERE id_hash = $2", ts(at), id_hash)


async def delete_login(db: Connection, id_hash: str) -> bool:
    return await db.fetchrow("DELETE FROM status_logins WHERE id_hash = $1 RETURNING 1", id_hash) is not None


async def prune_logins(db: Connection, seen_before: datetime, created_before: datetime) -> int:
    rows = await db.fetch("DELETE FROM status_logins WHERE seen_at < $1 OR created_at < $2 RETURNING 1",
                          ts(seen_before), ts(created_before))
    return len(rows)


def _audit_args(rec: AuditRecord) -> tuple[Any, ...]:
    return (ts(rec.at), rec.user_id, rec.session_id, rec.tool, rec.server,
            json.dumps(rec.arguments, ensure_ascii=False, default=str), rec.outcome, rec.error, rec.duration_ms,
            rec.result_size, rec.run_id)


_AUDIT_INSERT = ("INSERT INTO audit (at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, "
                 "result_size, run_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)")


async def add_audit(db: Connection, rec: AuditRecord) -> int:
    return int(await db.fetchval(_AUDIT_INSERT + " RETURNING id", *_audit_args(rec)))


async def add_audits(db: Connection, records: list[AuditRecord]) -> None:
    if records:
        await db.executemany(_AUDIT_INSERT, [_audit_args(r) for r in records])


async def query_audit(db: Connection, user_id: str | None, tool: str | None, since: datetime | None,
                      limit: int) -> list[AuditRecord]:
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("user_id", user_id), ("tool", tool)):
        if value is not None:
            args.append(value)
            where.append(f"{column} = ${len(args)}")
    if since is not None:
        args.append(ts(since))
        where.append(f"at >= ${len(args)}")
    sql = f"SELECT {_AUDIT_COLS} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    args.append(limit)
    sql += f" ORDER BY at DESC, id DESC LIMIT ${len(args)}"
    out = []
    for aid, at, uid, sid, tool_, server, arguments, outcome, error, ms, size, run in await db.fetch(sql, *args):
        out.append(AuditRecord(dt(at), uid, tool_, outcome, ms, server, sid, json.loads(arguments), error, size, aid,
                               run))
    return out


async def prune_audit(db: Connection, before: datetime) -> int:
    return int((await db.execute("DELETE FROM audit WHERE at < $1", ts(before))).split()[-1])


# --- agent runs -----------------------------------------------------------------------------------

async def add_run(db: Connection, r: RunRecord) -> None:
    await db.execute(f"INSERT INTO agent_runs ({_RUN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
                     f"$12, $13, $14, $15)",
                     r.run_id, r.user_id, r.session_id, r.profile, r.task, ts(r.started_at), ts(r.ended_at),
                     r.stop_reason, r.rounds, r.input_tokens, r.output_tokens, r.answer,
                     json.dumps(r.trace, ensure_ascii=False, default=str), r.rating, r.comment)


async def get_run(db: Connection, user_id: str, run_id: str) -> RunRecord:
    row = await db.fetchrow(f"SELECT {_RUN_COLS} FROM agent_runs WHERE user_id = $1 AND run_id = $2", user_id, run_id)
    if row is None:
        raise NotFound("run", run_id, "list your runs with hermes_trace_list")
    return _run(tuple(row))


async def list_runs(db: Connection, user_id: str, limit: int) -> list[RunRecord]:
    rows = await db.fetch(f"SELECT {_RUN_COLS} FROM agent_runs WHERE user_id = $1 ORDER BY started_at DESC LIMIT $2",
                          user_id, limit)
    return [_run(tuple(r)) for r in rows]


async def rate_run(db: Connection, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
    await get_run(db, user_id, run_id)
    await db.execute("UPDATE agent_runs SET rating = $1, comment = $2 WHERE user_id = $3 AND run_id = $4",
                     rating, comment, user_id, run_id)
    return await get_run(db, user_id, run_id)
