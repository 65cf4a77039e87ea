"""PostgreSQL SQL that keeps the hub's own OAuth bounded (SQLite's ``oauth_upkeep``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.rows import ts

Connection = Any
UNUSED = "NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)"


async def prune_oauth_clients(db: Connection, unused_before: datetime) -> int:
    rows = await db.fetch(f"DELETE FROM oauth_clients WHERE created_at < $1 AND {UNUSED} RETURNING 1",
                          ts(unused_before))
    return len(rows)


async def oauth_counts(db: Connection, at: datetime) -> dict[str, int]:
    row = await db.fetchrow(f"SELECT count(*), coalesce(sum(CASE WHEN {UNUSED} THEN 1 ELSE 0 END), 0) "
                            "FROM oauth_clients")
    requests = await db.fetchval("SELECT count(*) FROM oauth_tokens WHERE kind = 'request' AND used_at IS NULL "
                                 "AND expires_at >= $1", ts(at))
    return {"clients": int(row[0]), "unused_clients": int(row[1]), "requests": int(requests)}
