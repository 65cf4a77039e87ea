"""PostgreSQL SQL of schedules and occurrences (migration p010), safe for replicas.

Planning is a compare-and-set on ``next_due`` (the row lock of the UPDATE makes a second replica's step
find the value moved, so it adds nothing); a claim picks the oldest ready occurrence with ``FOR UPDATE
SKIP LOCKED``, so two replicas never hold the same one; leases run on the database's clock.
"""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.postgres.sessions import NOW
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
_KEYS = ("run_id", "session_id", "answer", "stop_reason", "error")


async def add_schedule(db: Connection, r: ScheduleRecord) -> None:
    await db.execute(f"INSERT INTO schedules ({SCHEDULE_COLS}) VALUES ({', '.join(f'${i}' for i in range(1, 18))})",
                     *r.values())


async def get_schedule(db: Connection, user_id: str, schedule_id: str) -> ScheduleRecord:
    row = await db.fetchrow(f"SELECT {SCHEDULE_COLS} FROM schedules WHERE id = $1 AND user_id = $2",
                            schedule_id, user_id)
    if row is None:
        raise schedule_not_found(schedule_id)
    return schedule_record(row)


async def list_schedules(db: Connection, user_id: str | None, limit: int) -> list[ScheduleRecord]:
    if user_id is None:
        rows = await db.fetch(f"SELECT {SCHEDULE_COLS} FROM schedules ORDER BY created_at, id LIMIT $1", limit)
    else:
        rows = await db.fetch(f"SELECT {SCHEDULE_COLS} FROM schedules WHERE user_id = $1 ORDER BY created_at, id "
                              f"LIMIT $2", user_id, limit)
    return [schedule_record(r) for r in rows]


async def update_schedule(db: Connection, r: ScheduleRecord) -> None:
    row = await db.fetchrow(
        "UPDATE schedules SET task = $1, kind = $2, spec = $3, timezone = $4, profile = $5, session_id = $6, "
        "misfire_grace = $7, jitter = $8, retries = $9, notify = $10, state = $11, next_due = $12, updated_at = $13 "
        "WHERE id = $14 AND user_id = $15 RETURNING 1", r.task, r.kind, r.spec, r.timezone, r.profile, r.session_id,
        r.misfire_grace, r.jitter, r.retries, r.notify, r.state, r.next_due, r.updated_at, r.schedule_id, r.user_id)
    if row is None:
        raise schedule_not_found(r.schedule_id)


async def set_session(db: Connection, schedule_id: str, session_id: str) -> None:
    await db.execute("UPDATE schedules SET session_id = $1 WHERE id = $2 AND session_id IS NULL", session_id, schedule_id)


async def delete_schedule(db: Connection, user_id: str, schedule_id: str) -> bool:
    await db.execute("DELETE FROM schedule_runs WHERE schedule_id = $1 AND user_id = $2", schedule_id, user_id)
    row = await db.fetchrow("DELETE FROM schedules WHERE id = $1 AND user_id = $2 RETURNING 1", schedule_id, user_id)
    return row is not None


async def due_schedules(db: Connection, now: float, limit: int) -> list[ScheduleRecord]:
    rows = await db.fetch(f"SELECT {SCHEDULE_COLS} FROM schedules WHERE state = 'active' AND next_due <= $1 "
                          f"ORDER BY next_due LIMIT $2", now, limit)
    return [schedule_record(r) for r in rows]


async def plan(db: Connection, schedule_id: str, seen_due: float, next_due: float | None, state: str,
               planned: list[Planned], now: float) -> bool:
    row = await db.fetchrow("UPDATE schedules SET next_due = $1, state = $2 WHERE id = $3 AND next_due = $4 "
                            "AND state = 'active' RETURNING user_id", next_due, state, schedule_id, seen_due)
    if row is None:
        return False
    await db.executemany(
        "INSERT INTO schedule_runs (schedule_id, user_id, due_at, fire_at, state, missed, error, finished_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
        [(schedule_id, row[0], p.due_at, p.fire_at, p.state, p.missed, p.error, now if p.state in FINISHED else None)
         for p in planned])
    return True


async def claim(db: Connection, owner: str, now: float, lease: float) -> OccurrenceRecord | None:
    row = await db.fetchrow(
        f"UPDATE schedule_runs SET state = 'running', owner = $1, claimed_until = {NOW} + $2, attempts = attempts + 1 "
        f"WHERE id = (SELECT id FROM schedule_runs WHERE (state = 'pending' AND fire_at <= $3) OR "
        f"(state = 'running' AND claimed_until < {NOW}) ORDER BY fire_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) "
        f"RETURNING id", owner, lease, now)
    if row is None:
        return None
    return occurrence_record(await db.fetchrow(f"SELECT {OCCURRENCE_COLS} {_JOIN} WHERE o.id = $1", row[0]))


async def renew(db: Connection, occurrence_id: int, owner: str, lease: float) -> bool:
    row = await db.fetchrow(f"UPDATE schedule_runs SET claimed_until = {NOW} + $1 WHERE id = $2 AND owner = $3 "
                            f"AND state = 'running' RETURNING 1", lease, occurrence_id, owner)
    return row is not None


async def finish(db: Connection, occurrence_id: int, owner: str, state: str, fields: dict[str, Any],
                 now: float, retry_at: float | None, again: bool = False) -> bool:
    held = await db.fetchrow("SELECT 1 FROM schedule_runs WHERE id = $1 AND owner = $2 AND state = 'running' "
                             "FOR UPDATE", occurrence_id, owner)
    if held is None:
        return False
    values = [fields.get(k) for k in _KEYS]
    sets = ", ".join(f"{k} = ${i}" for i, k in enumerate(_KEYS, start=5))
    if retry_at is not None:  # back to pending, fired again at retry_at
        state, when, column = "pending", retry_at, "fire_at"
    else:
        when, column = now, "finished_at"
    await db.execute(f"UPDATE schedule_runs SET state = $3, owner = NULL, {column} = $2, attempts = attempts - $4, "
                     f"{sets} WHERE id = $1", occurrence_id, when, state, int(again), *values)
    return True


async def occurrences(db: Connection, user_id: str, schedule_id: str | None, finished: bool, limit: int,
                      ) -> list[OccurrenceRecord]:
    where, args = ["o.user_id = $1"], [user_id]
    if schedule_id is not None:
        args.append(schedule_id)
        where.append(f"o.schedule_id = ${len(args)}")
    if finished:
        where.append("o.state IN ('done', 'failed', 'missed')")
    order = "o.finished_at DESC, o.id DESC" if finished else "o.due_at DESC, o.id DESC"
    args.append(limit)
    rows = await db.fetch(f"SELECT {OCCURRENCE_COLS} {_JOIN} WHERE {' AND '.join(where)} ORDER BY {order} "
                          f"LIMIT ${len(args)}", *args)
    return [occurrence_record(r) for r in rows]


async def schedule_counts(db: Connection) -> dict[str, int]:
    out = {f"schedules_{s}": int(n) for s, n in await db.fetch("SELECT state, count(*) FROM schedules GROUP BY state")}
    out.update({f"occurrences_{s}": int(n) for s, n in
                await db.fetch("SELECT state, count(*) FROM schedule_runs GROUP BY state")})
    return out


async def p014_schedules(db: Connection) -> None:
    """SQLite's m016: schedules and their occurrences; an occurrence goes with its schedule."""
    await db.execute("""CREATE TABLE schedules (
        id            text PRIMARY KEY,
        user_id       text NOT NULL,
        role          text NOT NULL,
        task          text NOT NULL,
        kind          text NOT NULL CHECK (kind IN ('at', 'every', 'cron')),
        spec          text NOT NULL,
        timezone      text NOT NULL,
        profile       text NOT NULL,
        session_id    text,
        misfire_grace double precision,
        jitter        double precision,
        retries       integer,
        notify        text,
        state         text NOT NULL,
        next_due      double precision,
        created_at    double precision NOT NULL,
        updated_at    double precision NOT NULL)""")
    await db.execute("CREATE INDEX schedules_by_due ON schedules (state, next_due)")
    await db.execute("CREATE INDEX schedules_by_user ON schedules (user_id, created_at)")
    await db.execute("""CREATE TABLE schedule_runs (
        id            bigserial PRIMARY KEY,
        schedule_id   text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        user_id       text NOT NULL,
        due_at        double precision NOT NULL,
        fire_at       double precision NOT NULL,
        state         text NOT NULL,
        attempts      integer NOT NULL DEFAULT 0,
        owner         text,
        claimed_until double precision,
        finished_at   double precision,
        run_id        text,
        session_id    text,
        answer        text,
        stop_reason   text,
        error         text,
        missed        integer NOT NULL DEFAULT 0,
        UNIQUE (schedule_id, due_at))""")
    await db.execute("CREATE INDEX schedule_runs_ready ON schedule_runs (state, fire_at)")
    await db.execute("CREATE INDEX schedule_runs_inbox ON schedule_runs (user_id, finished_at)")
