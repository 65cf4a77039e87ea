"""SQL of pinned tool definitions (``tool_pins``): one row per downstream tool, hub-wide."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import PinRecord
from hermes_hub.infra.storage.rows import PIN_COLS, dumps, pin_record, pin_values, ts

Connection = Any


def list_pins(db: Connection, server: str | None) -> list[PinRecord]:
    rows = db.execute(f"SELECT {PIN_COLS} FROM tool_pins WHERE ? IS NULL OR server = ? ORDER BY server, tool",
                      (server, server)).fetchall()
    return [pin_record(r) for r in rows]


def add_pins(db: Connection, records: list[PinRecord]) -> int:
    added = 0
    for rec in records:
        added += db.execute(f"INSERT INTO tool_pins ({PIN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT (server, tool) DO NOTHING", pin_values(rec)).rowcount
    return added


def note_seen(db: Connection, server: str, tool: str, digest: str | None, definition: dict[str, Any] | None,
              at: datetime) -> None:
    db.execute("UPDATE tool_pins SET seen_digest = ?, seen_definition = ?, seen_at = ? WHERE server = ? AND tool = ?",
               (digest, None if definition is None else dumps(definition), None if digest is None else ts(at),
                server, tool))


def approve_pins(db: Connection, server: str, tool: str | None, digests: list[str], by: str,
                 at: datetime) -> list[PinRecord]:
    rows = db.execute(f"UPDATE tool_pins SET digest = seen_digest, definition = seen_definition, pinned_at = ?, "
                      f"pinned_by = ?, seen_digest = NULL, seen_definition = NULL, seen_at = NULL "
                      f"WHERE server = ? AND (? IS NULL OR tool = ?) AND seen_digest IS NOT NULL "
                      f"AND seen_digest IN (SELECT value FROM json_each(?)) RETURNING {PIN_COLS}",
                      (ts(at), by, server, tool, tool, json.dumps(digests))).fetchall()
    return sorted((pin_record(r) for r in rows), key=lambda p: p.tool)


def upgrade_pins(db: Connection, records: list[tuple[str, PinRecord]]) -> int:
    changed = 0
    for old, rec in records:
        changed += db.execute("UPDATE tool_pins SET digest = ?, definition = ?, seen_digest = NULL, "
                              "seen_definition = NULL, seen_at = NULL WHERE server = ? AND tool = ? AND digest = ?",
                              (rec.digest, dumps(rec.definition), rec.server, rec.tool, old)).rowcount
    return changed


def m014_tool_pins(db: Connection) -> None:
    """Pinned tool definitions, hub-wide (see ``hermes_hub.core.aggregation.pins``)."""
    db.execute("""
        CREATE TABLE tool_pins (
            server          TEXT NOT NULL,
            tool            TEXT NOT NULL,
            digest          TEXT NOT NULL,
            definition      TEXT NOT NULL,
            pinned_at       REAL NOT NULL,
            pinned_by       TEXT NOT NULL,
            seen_digest     TEXT,
            seen_definition TEXT,
            seen_at         REAL,
            PRIMARY KEY (server, tool)
        )""")
