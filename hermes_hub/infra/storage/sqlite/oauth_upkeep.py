"""SQL that keeps the hub's own OAuth bounded: clients never used, counts of what anonymous callers left."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.rows import ts

Connection = Any
UNUSED = "NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)"


def prune_oauth_clients(db: Connection, unused_before: datetime) -> int:
    return db.execute(f"DELETE FROM oauth_clients WHERE created_at < ? AND {UNUSED}", (ts(unused_before),)).rowcount


def oauth_counts(db: Connection, at: datetime) -> dict[str, int]:
    clients, unused = db.execute(f"SELECT count(*), coalesce(sum(CASE WHEN {UNUSED} THEN 1 ELSE 0 END), 0) "
                                 "FROM oauth_clients").fetchone()
    requests = db.execute("SELECT count(*) FROM oauth_tokens WHERE kind = 'request' AND used_at IS NULL "
                          "AND expires_at >= ?", (ts(at),)).fetchone()[0]
    return {"clients": clients, "unused_clients": unused, "requests": requests}
