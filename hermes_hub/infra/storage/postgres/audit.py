"""PostgreSQL SQL of the audit trail (the same rows as SQLite's): async functions of a connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import AuditRecord
from hermes_hub.infra.storage.rows import AUDIT_COLS, AUDIT_INSERT_COLS, audit_record, audit_values, ts

Connection = Any
_INSERT = f"INSERT INTO audit ({AUDIT_INSERT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"


async def add_audit(db: Connection, rec: AuditRecord) -> int:
    return int(await db.fetchval(_INSERT + " RETURNING id", *audit_values(rec)))


async def add_audits(db: Connection, records: list[AuditRecord]) -> None:
    if records:  # one round trip for the background writer's batch
        await db.executemany(_INSERT, [audit_values(r) for r in records])


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
    sql = f"SELECT {AUDIT_COLS} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    args.append(limit)
    sql += f" ORDER BY at DESC, id DESC LIMIT ${len(args)}"
    return [audit_record(tuple(row)) for row in await db.fetch(sql, *args)]


async def audit_days(db: Connection, since: datetime, min_days: int, limit: int) -> list[tuple[str, str, int, int]]:
    rows = await db.fetch(
        "SELECT user_id, tool, COUNT(DISTINCT floor(at / 86400)) AS days, COUNT(*) AS calls FROM audit "
        "WHERE at >= $1 AND outcome = 'ok' GROUP BY user_id, tool HAVING COUNT(DISTINCT floor(at / 86400)) >= $2 "
        "ORDER BY user_id, days DESC, calls DESC, tool LIMIT $3", ts(since), min_days, limit)
    return [(r[0], r[1], int(r[2]), int(r[3])) for r in rows]


async def prune_audit(db: Connection, before: datetime) -> int:
    return int((await db.execute("DELETE FROM audit WHERE at < $1", ts(before))).split()[-1])
