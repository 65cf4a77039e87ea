"""SQL of schedules and their occurrences, and their migration (m016, listed in ``migrations``).

Planning is a compare-and-set on a schedule's ``next_due`` (only the step that read the old value adds the
occurrences); a claim takes the oldest ready occurrence, or one whose holder's lease ran out, as the job
queues do. Every read a person makes filters by their user id.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_hub.infra.storage.timetable import (
    FINISHED,
    OCCURRENCE_COLS,
    SCHEDULE_COLS,
    OccurrenceRecord,
    Planned,
    ScheduleRecord,
    occurrence_record,
    schedule_not_found,
    schedule_record,
)

Connection = Any
_JOIN = "FROM schedule_runs o JOIN schedules s ON s.id = o.schedule_id"


def add_schedule(db: Connection, r: ScheduleRecord) -> None:
    db.execute(f"INSERT INTO schedules ({SCHEDULE_COLS}) VALUES ({', '.join('?' * 17)})", r.values())


def get_schedule(db: Connection, user_id: str, schedule_id: str) -> ScheduleRecord:
    row = db.execute(f"SELECT {SCHEDULE_COLS} FROM schedules WHERE id = ? AND user_id = ?",
                     (schedule_id, user_id)).fetchone()
    if row is None:
        raise schedule_not_found(schedule_id)
    return schedule_record(row)


def list_schedules(db: Connection, user_id: str | None, limit: int) -> list[ScheduleRecord]:
    where, args = ("WHERE user_id = ?", (user_id,)) if user_id is not None else ("", ())
    rows = db.execute(f"SELECT {SCHEDULE_COLS} FROM schedules {where} ORDER BY created_at, id LIMIT ?",
                      (*args, limit)).fetchall()
    return [schedule_record(r) for r in rows]


def update_schedule(db: Connection, r: ScheduleRecord) -> None:
    cur = db.execute("UPDATE schedules SET task = ?, kind = ?, spec = ?, timezone = ?, profile = ?, session_id = ?, "
                     "misfire_grace = ?, jitter = ?, retries = ?, notify = ?, state = ?, next_due = ?, updated_at = ? "
                     "WHERE id = ? AND user_id = ?",
                     (r.task, r.kind, r.spec, r.timezone, r.profile, r.session_id, r.misfire_grace, r.jitter,
                      r.retries, r.notify, r.state, r.next_due, r.updated_at, r.schedule_id, r.user_id))
    if cur.rowcount != 1:
        raise schedule_not_found(r.schedule_id)


def set_session(db: Connection, schedule_id: str, session_id: str) -> None:
    db.execute("UPDATE schedules SET session_id = ? WHERE id = ? AND session_id IS NULL", (session_id, schedule_id))


def delete_schedule(db: Connection, user_id: str, schedule_id: str) -> bool:
    db.execute("DELETE FROM schedule_runs WHERE schedule_id = ? AND user_id = ?", (schedule_id, user_id))
    return db.execute("DELETE FROM schedules WHERE id = ? AND user_id = ?", (schedule_id, user_id)).rowcount == 1


def due_schedules(db: Connection, now: float, limit: int) -> list[ScheduleRecord]:
    rows = db.execute(f"SELECT {SCHEDULE_COLS} FROM schedules WHERE state = 'active' AND next_due <= ? "
                      f"ORDER BY next_due LIMIT ?", (now, limit)).fetchall()
    return [schedule_record(r) for r in rows]


def plan(db: Connection, schedule_id: str, seen_due: float, next_due: float | None, state: str,
         planned: list[Planned], now: float) -> bool:
    """Move the schedule from ``seen_due`` to ``next_due`` and add ``planned``; False if another step did."""
    cur = db.execute("UPDATE schedules SET next_due = ?, state = ? WHERE id = ? AND next_due = ? AND state = 'active'",
                     (next_due, state, schedule_id, seen_due))
    if cur.rowcount != 1:
        return False
    user_id = db.execute("SELECT user_id FROM schedules WHERE id = ?", (schedule_id,)).fetchone()[0]
    for p in planned:
        db.execute("INSERT OR IGNORE INTO schedule_runs (schedule_id, user_id, due_at, fire_at, state, missed, "
                   "error, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (schedule_id, user_id, p.due_at, p.fire_at, p.state, p.missed, p.error,
                    now if p.state in FINISHED else None))
    return True


def claim(db: Connection, owner: str, now: float, lease: float) -> OccurrenceRecord | None:
    wall = time.time()
    row = db.execute("UPDATE schedule_runs SET state = 'running', owner = ?, claimed_until = ?, attempts = attempts + 1 "
                     "WHERE id = (SELECT id FROM schedule_runs WHERE (state = 'pending' AND fire_at <= ?) OR "
                     "(state = 'running' AND claimed_until < ?) ORDER BY fire_at, id LIMIT 1) RETURNING id",
                     (owner, wall + lease, now, wall)).fetchone()
    if row is None:
        return None
    return occurrence_record(db.execute(f"SELECT {OCCURRENCE_COLS} {_JOIN} WHERE o.id = ?", (row[0],)).fetchone())


def renew(db: Connection, occurrence_id: int, owner: str, lease: float) -> bool:
    return db.execute("UPDATE schedule_runs SET claimed_until = ? WHERE id = ? AND owner = ? AND state = 'running'",
                      (time.time() + lease, occurrence_id, owner)).rowcount == 1


def finish(db: Connection, occurrence_id: int, owner: str, state: str, fields: dict[str, Any],
           now: float, retry_at: float | None, again: bool = False) -> bool:
    """End the held occurrence as ``state`` (or give it back for ``retry_at``); False if ``owner`` lost it."""
    held = db.execute("SELECT 1 FROM schedule_runs WHERE id = ? AND owner = ? AND state = 'running'",
                      (occurrence_id, owner)).fetchone()
    if held is None:
        return False
    keys = ("run_id", "session_id", "answer", "stop_reason", "error")
    values = [fields.get(k) for k in keys]
    if retry_at is not None:
        db.execute(f"UPDATE schedule_runs SET state = 'pending', owner = NULL, fire_at = ?, attempts = attempts - ?, "
                   f"{', '.join(f'{k} = ?' for k in keys)} WHERE id = ?", (retry_at, int(again), *values, occurrence_id))
    else:
        db.execute(f"UPDATE schedule_runs SET state = ?, owner = NULL, finished_at = ?, "
                   f"{', '.join(f'{k} = ?' for k in keys)} WHERE id = ?", (state, now, *values, occurrence_id))
    return True


def occurrences(db: Connection, user_id: str, schedule_id: str | None, finished: bool, limit: int,
                ) -> list[OccurrenceRecord]:
    """The user's occurrences newest first: of one schedule, or (``finished``) the inbox."""
    where, args = ["o.user_id = ?"], [user_id]
    if schedule_id is not None:
        where.append("o.schedule_id = ?")
        args.append(schedule_id)
    if finished:
        where.append("o.state IN ('done', 'failed', 'missed')")
    order = "o.finished_at DESC, o.id DESC" if finished else "o.due_at DESC, o.id DESC"
    rows = db.execute(f"SELECT {OCCURRENCE_COLS} {_JOIN} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?",
                      (*args, limit)).fetchall()
    return [occurrence_record(r) for r in rows]


def schedule_counts(db: Connection) -> dict[str, int]:
    out = {f"schedules_{s}": n for s, n in db.execute("SELECT state, count(*) FROM schedules GROUP BY state")}
    out.update({f"occurrences_{s}": n for s, n in db.execute("SELECT state, count(*) FROM schedule_runs GROUP BY state")})
    return out


def m020_schedules(db: Connection) -> None:
    # Schedules and their occurrences (issue 24); an occurrence goes with its schedule.
    db.execute("""
        CREATE TABLE schedules (
            id            TEXT PRIMARY KEY,
            user_id       TEXT NOT NULL,
            role          TEXT NOT NULL,
            task          TEXT NOT NULL,
            kind          TEXT NOT NULL CHECK (kind IN ('at', 'every', 'cron')),
            spec          TEXT NOT NULL,
            timezone      TEXT NOT NULL,
            profile       TEXT NOT NULL,
            session_id    TEXT,
            misfire_grace REAL,
            jitter        REAL,
            retries       INTEGER,
            notify        TEXT,
            state         TEXT NOT NULL,
            next_due      REAL,
            created_at    REAL NOT NULL,
            updated_at    REAL NOT NULL
        )""")
    db.execute("CREATE INDEX schedules_by_due ON schedules (state, next_due)")
    db.execute("CREATE INDEX schedules_by_user ON schedules (user_id, created_at)")
    db.execute("""
        CREATE TABLE schedule_runs (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            schedule_id   TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
            user_id       TEXT NOT NULL,
            due_at        REAL NOT NULL,
            fire_at       REAL NOT NULL,
            state         TEXT NOT NULL,
            attempts      INTEGER NOT NULL DEFAULT 0,
            owner         TEXT,
            claimed_until REAL,
            finished_at   REAL,
            run_id        TEXT,
            session_id    TEXT,
            answer        TEXT,
            stop_reason   TEXT,
            error         TEXT,
            missed        INTEGER NOT NULL DEFAULT 0,
            UNIQUE (schedule_id, due_at)
        )""")
    db.execute("CREATE INDEX schedule_runs_ready ON schedule_runs (state, fire_at)")
    db.execute("CREATE INDEX schedule_runs_inbox ON schedule_runs (user_id, finished_at)")
