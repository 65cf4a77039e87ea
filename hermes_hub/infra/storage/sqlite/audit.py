"""SQL of the audit trail (who called what, when, with which outcome): functions of a connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import AuditRecord
from hermes_hub.infra.storage.rows import AUDIT_COLS, AUDIT_INSERT_COLS, audit_record, audit_values, ts

Connection = Any
_INSERT = f"INSERT INTO audit ({AUDIT_INSERT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def add_audit(db: Connection, rec: AuditRecord) -> int:
    return int(db.execute(_INSERT, audit_values(rec)).lastrowid)


def add_audits(db: Connection, records: list[AuditRecord]) -> None:
    for rec in records:
        add_audit(db, rec)


def query_audit(db: Connection, user_id: str | None, tool: str | None, since: datetime | None,
                limit: int) -> list[AuditRecord]:
    where, args = [], []
    for column, value in (("user_id = ?", user_id), ("tool = ?", tool), ("at >= ?", since and ts(since))):
        if value is not None:
            where.append(column)
            args.append(value)
    sql = f"SELECT {AUDIT_COLS} FROM audit"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY at DESC, id DESC LIMIT ?"
    return [audit_record(row) for row in db.execute(sql, [*args, limit])]


def audit_days(db: Connection, since: datetime, min_days: int, limit: int) -> list[tuple[str, str, int, int]]:
    return [tuple(row) for row in db.execute(
        "SELECT user_id, tool, COUNT(DISTINCT CAST(at / 86400 AS INTEGER)) AS days, COUNT(*) AS calls FROM audit "
        "WHERE at >= ? AND outcome = 'ok' GROUP BY user_id, tool HAVING days >= ? "
        "ORDER BY user_id, days DESC, calls DESC, tool LIMIT ?", (ts(since), min_days, limit))]


def prune_audit(db: Connection, before: datetime) -> int:
    return db.execute("DELETE FROM audit WHERE at < ?", (ts(before),)).rowcount


def m017_audit_call_ids(db: Connection) -> None:
    """The pipeline's id of each call, so a person can name one (``hermes-hub audit --unmask CALL_ID``)."""
    db.execute("ALTER TABLE audit ADD COLUMN call_id TEXT")
    db.execute("CREATE INDEX audit_by_call ON audit (call_id) WHERE call_id IS NOT NULL")
