"""SQL of agent runs and their traces (migration m009). Every read filters by the caller's user id."""

from __future__ import annotations

import json
from typing import Any

from hermes_hub.errors import NotFound
from hermes_hub.storage.records import RunRecord
from hermes_hub.storage.sqlite_sessions import dt, ts

Connection = Any
_COLS = ("run_id, user_id, session_id, profile, task, started_at, ended_at, stop_reason, rounds, input_tokens, "
         "output_tokens, answer, trace, rating, comment")


def _run(row: tuple[Any, ...]) -> RunRecord:
    (rid, uid, sid, profile, task, started, ended, stop, rounds, tin, tout, answer, trace, rating, comment) = row
    return RunRecord(rid, uid, sid, profile, task, dt(started), dt(ended), stop, rounds, tin, tout, answer,
                     json.loads(trace), rating, comment)


def add_run(db: Connection, r: RunRecord) -> None:
    db.execute(f"INSERT INTO agent_runs ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (r.run_id, r.user_id, r.session_id, r.profile, r.task, ts(r.started_at), ts(r.ended_at), r.stop_reason,
                r.rounds, r.input_tokens, r.output_tokens, r.answer, json.dumps(r.trace, ensure_ascii=False, default=str),
                r.rating, r.comment))


def get_run(db: Connection, user_id: str, run_id: str) -> RunRecord:
    row = db.execute(f"SELECT {_COLS} FROM agent_runs WHERE user_id = ? AND run_id = ?", (user_id, run_id)).fetchone()
    if row is None:
        raise NotFound("run", run_id, "list your runs with hermes_trace_list")
    return _run(row)


def list_runs(db: Connection, user_id: str, limit: int) -> list[RunRecord]:
    rows = db.execute(f"SELECT {_COLS} FROM agent_runs WHERE user_id = ? ORDER BY started_at DESC LIMIT ?",
                      (user_id, limit))
    return [_run(r) for r in rows]


def rate_run(db: Connection, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
    get_run(db, user_id, run_id)
    db.execute("UPDATE agent_runs SET rating = ?, comment = ? WHERE user_id = ? AND run_id = ?",
               (rating, comment, user_id, run_id))
    return get_run(db, user_id, run_id)
