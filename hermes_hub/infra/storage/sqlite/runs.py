"""SQL of agent runs and their traces (migration m009). Every read filters by the caller's user id."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.records import RunRecord
from hermes_hub.infra.storage.rows import RUN_COLS, run_not_found, run_record, run_values

Connection = Any


def add_run(db: Connection, r: RunRecord) -> None:
    db.execute(f"INSERT INTO agent_runs ({RUN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               run_values(r))


def get_run(db: Connection, user_id: str, run_id: str) -> RunRecord:
    row = db.execute(f"SELECT {RUN_COLS} FROM agent_runs WHERE user_id = ? AND run_id = ?",
                     (user_id, run_id)).fetchone()
    if row is None:
        raise run_not_found(run_id)
    return run_record(row)


def list_runs(db: Connection, user_id: str, limit: int) -> list[RunRecord]:
    rows = db.execute(f"SELECT {RUN_COLS} FROM agent_runs WHERE user_id = ? ORDER BY started_at DESC LIMIT ?",
                      (user_id, limit))
    return [run_record(r) for r in rows]


def rate_run(db: Connection, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
    get_run(db, user_id, run_id)
    db.execute("UPDATE agent_runs SET rating = ?, comment = ? WHERE user_id = ? AND run_id = ?",
               (rating, comment, user_id, run_id))
    return get_run(db, user_id, run_id)
