"""PostgreSQL SQL of pending approvals (``approvals``, see ``hermes_hub.infra.storage.approvals``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.approvals import APPROVAL_COLS, APPROVED, EXPIRED, PENDING, USED, ApprovalRecord, \
    approval_record, approval_values

Connection = Any


async def add_approval(db: Connection, record: ApprovalRecord) -> None:
    await db.execute(f"INSERT INTO approvals ({APPROVAL_COLS}) VALUES ({', '.join(f'${i}' for i in range(1, 14))})",
                     *approval_values(record))


async def get_approval(db: Connection, approval_id: str) -> ApprovalRecord | None:
    row = await db.fetchrow(f"SELECT {APPROVAL_COLS} FROM approvals WHERE id = $1", approval_id)
    return None if row is None else approval_record(tuple(row))


async def decide_approval(db: Connection, approval_id: str, user_id: str, role: str, state: str, by: str, via: str,
                          at: datetime) -> ApprovalRecord | None:
    when = "expires_at <= $4" if state == EXPIRED else "expires_at > $4"
    row = await db.fetchrow(f"UPDATE approvals SET state = $1, decided_by = $2, decided_via = $3, decided_at = $4 "
                            f"WHERE id = $5 AND user_id = $6 AND role = $7 AND state = '{PENDING}' AND {when} "
                            f"RETURNING {APPROVAL_COLS}", state, by, via, at.timestamp(), approval_id, user_id, role)
    return None if row is None else approval_record(tuple(row))


async def use_approval(db: Connection, user_id: str, role: str, tool: str, digest: str, at: datetime,
                       approval_id: str | None) -> ApprovalRecord | None:
    row = await db.fetchrow(f"UPDATE approvals SET state = '{USED}' WHERE id = (SELECT id FROM approvals "
                            f"WHERE user_id = $1 AND role = $2 AND tool = $3 AND digest = $4 AND state = '{APPROVED}' "
                            f"AND expires_at > $5 AND ($6::text IS NULL OR id = $6) ORDER BY created_at LIMIT 1 "
                            f"FOR UPDATE SKIP LOCKED) AND state = '{APPROVED}' RETURNING {APPROVAL_COLS}",
                            user_id, role, tool, digest, at.timestamp(), approval_id)
    return None if row is None else approval_record(tuple(row))


async def list_approvals(db: Connection, user_id: str, role: str, pending_at: datetime | None,
                         limit: int) -> list[ApprovalRecord]:
    at = None if pending_at is None else pending_at.timestamp()
    rows = await db.fetch(f"SELECT {APPROVAL_COLS} FROM approvals WHERE user_id = $1 AND role = $2 AND "
                          f"($3::double precision IS NULL OR (state = '{PENDING}' AND expires_at > $3)) "
                          f"ORDER BY created_at DESC LIMIT $4", user_id, role, at, limit)
    return [approval_record(tuple(r)) for r in rows]


async def p010_approvals(db: Connection) -> None:
    """SQLite's m016: approvals of tool calls, answerable from any replica or the CLI."""
    await db.execute("""CREATE TABLE approvals (
        id          text PRIMARY KEY,
        user_id     text NOT NULL,
        role        text NOT NULL,
        tool        text NOT NULL,
        server      text NOT NULL,
        digest      text NOT NULL,
        preview     text NOT NULL,
        state       text NOT NULL,
        created_at  double precision NOT NULL,
        expires_at  double precision NOT NULL,
        decided_by  text,
        decided_via text,
        decided_at  double precision)""")
    await db.execute("CREATE INDEX approvals_by_binding ON approvals (user_id, role, tool, digest, state)")
