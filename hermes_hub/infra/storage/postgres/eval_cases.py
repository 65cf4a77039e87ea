"""PostgreSQL's evaluation cases (SQLite's m016, migration ``p013_eval_cases``): the runs a person rated
down, one case per run. Every read filters by the caller's user id."""

from __future__ import annotations

import json
from typing import Any

from hermes_hub.infra.storage.records import EvalCaseRecord
from hermes_hub.infra.storage.rows import dt, ts

Connection = Any


async def p013_eval_cases(db: Connection) -> None:
    await db.execute("""CREATE TABLE eval_cases (
        id         text PRIMARY KEY,
        user_id    text NOT NULL,
        run_id     text NOT NULL,
        created_at double precision NOT NULL,
        body       text NOT NULL,
        UNIQUE (user_id, run_id))""")
    await db.execute("CREATE INDEX eval_cases_by_user ON eval_cases (user_id, created_at)")


async def put_eval_case(db: Connection, r: EvalCaseRecord) -> None:
    await db.execute("INSERT INTO eval_cases (id, user_id, run_id, created_at, body) VALUES ($1, $2, $3, $4, $5) "
                     "ON CONFLICT (user_id, run_id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body",
                     r.case_id, r.user_id, r.run_id, ts(r.created_at), json.dumps(r.case, ensure_ascii=False))


async def list_eval_cases(db: Connection, user_id: str) -> list[EvalCaseRecord]:
    rows = await db.fetch("SELECT id, user_id, run_id, created_at, body FROM eval_cases WHERE user_id = $1 "
                          "ORDER BY created_at, id", user_id)
    return [EvalCaseRecord(r[0], r[1], r[2], dt(r[3]), json.loads(r[4])) for r in rows]
