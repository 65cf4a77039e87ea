"""SQLite's evaluation cases (issue 21, migration ``m019_eval_cases``): the runs a person rated down,
kept as cases of their own evaluation set (one per run; rating it down again replaces it)."""

from __future__ import annotations

import json
from typing import Any

from hermes_hub.infra.storage.records import EvalCaseRecord
from hermes_hub.infra.storage.rows import dt, ts

Connection = Any


def m019_eval_cases(db: Connection) -> None:
    db.execute("""
        CREATE TABLE eval_cases (
            id         TEXT PRIMARY KEY,
            user_id    TEXT NOT NULL,
            run_id     TEXT NOT NULL,
            created_at REAL NOT NULL,
            body       TEXT NOT NULL,          -- the case as JSON (hermes_hub.services.evaluation.cases.Case)
            UNIQUE (user_id, run_id)
        )""")
    db.execute("CREATE INDEX eval_cases_by_user ON eval_cases (user_id, created_at)")


def put_eval_case(db: Connection, r: EvalCaseRecord) -> None:
    db.execute("INSERT INTO eval_cases (id, user_id, run_id, created_at, body) VALUES (?, ?, ?, ?, ?) "
               "ON CONFLICT (user_id, run_id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body",
               (r.case_id, r.user_id, r.run_id, ts(r.created_at), json.dumps(r.case, ensure_ascii=False)))


def list_eval_cases(db: Connection, user_id: str) -> list[EvalCaseRecord]:
    rows = db.execute("SELECT id, user_id, run_id, created_at, body FROM eval_cases WHERE user_id = ? "
                      "ORDER BY created_at, id", (user_id,))
    return [EvalCaseRecord(cid, uid, rid, dt(at), json.loads(body)) for cid, uid, rid, at, body in rows]
