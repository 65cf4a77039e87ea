"""SQL of pending approvals (``approvals``, see ``hermes_hub.infra.storage.approvals``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.approvals import APPROVAL_COLS, APPROVED, EXPIRED, PENDING, USED, ApprovalRecord, \
    approval_record, approval_values

Connection = Any


def add_approval(db: Connection, record: ApprovalRecord) -> None:
    db.execute(f"INSERT INTO approvals ({APPROVAL_COLS}) VALUES ({', '.join('?' * 13)})", approval_values(record))


def get_approval(db: Connection, approval_id: str) -> ApprovalRecord | None:
    row = db.execute(f"SELECT {APPROVAL_COLS} FROM approvals WHERE id = ?", (approval_id,)).fetchone()
    return None if row is None else approval_record(row)


def decide_approval(db: Connection, approval_id: str, user_id: str, role: str, state: str, by: str, via: str,
                    at: datetime) -> ApprovalRecord | None:
    # approved/denied only while unexpired, expired only once past: the clock decides, not the caller
    when = "expires_at <= ?" if state == EXPIRED else "expires_at > ?"
    row = db.execute(f"UPDATE approvals SET state = ?, decided_by = ?, decided_via = ?, decided_at = ? "
                     f"WHERE id = ? AND user_id = ? AND role = ? AND state = '{PENDING}' AND {when} "
                     f"RETURNING {APPROVAL_COLS}",
                     (state, by, via, at.timestamp(), approval_id, user_id, role, at.timestamp())).fetchone()
    return None if row is None else approval_record(row)


def use_approval(db: Connection, user_id: str, role: str, tool: str, digest: str, at: datetime,
                 approval_id: str | None) -> ApprovalRecord | None:
    row = db.execute(f"UPDATE approvals SET state = '{USED}' WHERE id = (SELECT id FROM approvals WHERE user_id = ? "
                     f"AND role = ? AND tool = ? AND digest = ? AND state = '{APPROVED}' AND expires_at > ? "
                     f"AND (? IS NULL OR id = ?) ORDER BY created_at LIMIT 1) RETURNING {APPROVAL_COLS}",
                     (user_id, role, tool, digest, at.timestamp(), approval_id, approval_id)).fetchone()
    return None if row is None else approval_record(row)


def list_approvals(db: Connection, user_id: str, role: str, pending_at: datetime | None,
                   limit: int) -> list[ApprovalRecord]:
    at = None if pending_at is None else pending_at.timestamp()
    rows = db.execute(f"SELECT {APPROVAL_COLS} FROM approvals WHERE user_id = ? AND role = ? AND (? IS NULL OR "
                      f"(state = '{PENDING}' AND expires_at > ?)) ORDER BY created_at DESC LIMIT ?",
                      (user_id, role, at, at, limit)).fetchall()
    return [approval_record(r) for r in rows]


def m016_approvals(db: Connection) -> None:
    """Approvals of tool calls (``guards.approve``), answerable from any replica or the CLI."""
    db.execute("""
        CREATE TABLE approvals (
            id          TEXT PRIMARY KEY,
            user_id     TEXT NOT NULL,
            role        TEXT NOT NULL,
            tool        TEXT NOT NULL,
            server      TEXT NOT NULL,
            digest      TEXT NOT NULL,
            preview     TEXT NOT NULL,
            state       TEXT NOT NULL,
            created_at  REAL NOT NULL,
            expires_at  REAL NOT NULL,
            decided_by  TEXT,
            decided_via TEXT,
            decided_at  REAL
        )""")
    db.execute("CREATE INDEX approvals_by_binding ON approvals (user_id, role, tool, digest, state)")
