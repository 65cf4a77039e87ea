"""PostgreSQL SQL of pinned tool definitions (``tool_pins``): one row per downstream tool, hub-wide."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import PinRecord
from hermes_hub.infra.storage.rows import PIN_COLS, dumps, pin_record, pin_values, ts

Connection = Any


async def list_pins(db: Connection, server: str | None) -> list[PinRecord]:
    rows = await db.fetch(f"SELECT {PIN_COLS} FROM tool_pins WHERE $1::text IS NULL OR server = $1 "
                          "ORDER BY server, tool", server)
    return [pin_record(tuple(r)) for r in rows]


async def add_pins(db: Connection, records: list[PinRecord]) -> int:
    added = 0
    for rec in records:
        row = await db.fetchrow(f"INSERT INTO tool_pins ({PIN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
                                "ON CONFLICT (server, tool) DO NOTHING RETURNING 1", *pin_values(rec))
        added += row is not None
    return added


async def note_seen(db: Connection, server: str, tool: str, digest: str | None, definition: dict[str, Any] | None,
                    at: datetime) -> None:
    await db.execute("UPDATE tool_pins SET seen_digest = $1, seen_definition = $2, seen_at = $3 "
                     "WHERE server = $4 AND tool = $5", digest, None if definition is None else dumps(definition),
                     None if digest is None else ts(at), server, tool)


async def approve_pins(db: Connection, server: str, tool: str | None, digests: list[str], by: str,
                       at: datetime) -> list[PinRecord]:
    rows = await db.fetch(f"UPDATE tool_pins SET digest = seen_digest, definition = seen_definition, pinned_at = $1, "
                          f"pinned_by = $2, seen_digest = NULL, seen_definition = NULL, seen_at = NULL "
                          f"WHERE server = $3 AND ($4::text IS NULL OR tool = $4) AND seen_digest IS NOT NULL "
                          f"AND seen_digest = ANY($5::text[]) RETURNING {PIN_COLS}", ts(at), by, server, tool, digests)
    return sorted((pin_record(tuple(r)) for r in rows), key=lambda p: p.tool)


async def upgrade_pins(db: Connection, records: list[tuple[str, PinRecord]]) -> int:
    changed = 0
    for old, rec in records:
        row = await db.fetchrow("UPDATE tool_pins SET digest = $1, definition = $2, seen_digest = NULL, "
                                "seen_definition = NULL, seen_at = NULL "
                                "WHERE server = $3 AND tool = $4 AND digest = $5 RETURNING 1", rec.digest, dumps(rec.definition), rec.server, rec.tool, old)
        changed += row is not None
    return changed
