"""PostgreSQL SQL of agent runs and their traces. Every read filters by the caller's user id."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.records import RunRecord
from hermes_hub.infra.storage.rows import RUN_COLS, run_not_found, run_record, run_values

Connection = Any


async def add_run(db: Connection, r: RunRecord) -> None:
    await db.execute(f"INSERT INTO agent_runs ({RUN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
                     f"$12, $13, $14, $15)", *run_values(r))


async def get_run(db: Connection, user_id: str, run_id: str) -> RunRecord:
    row = await db.fetchrow(f"SELECT {RUN_COLS} FROM agent_runs WHERE user_id = $1 AND run_id = $2", user_id, run_id)
    if row is None:
        raise run_not_found(run_id)
    return run_record(tuple(row))


async def list_runs(db: Connection, user_id: str, limit: int) -> list[RunRecord]:
    rows = await db.fetch(f"SELECT {RUN_COLS} FROM agent_runs WHERE user_id = $1 ORDER BY started_at DESC LIMIT $2",
                          user_id, limit)
    return [run_record(tuple(r)) for r in rows]


async def rate_run(db: Connection, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
    await get_run(db, user_id, run_id)
    await db.execute("UPDATE agent_runs SET rating = $1, comment = $2 WHERE user_id = $3 AND run_id = $4",
                     rating, comment, user_id, run_id)
    return await get_run(db, user_id, run_id)
