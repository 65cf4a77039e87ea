"""PostgreSQL SQL of the limits' counters (the same rows as SQLite's ``counters``): one upsert takes
a unit only while the sum stays within the limit, under the row's lock, so replicas share a limit."""

from __future__ import annotations

from typing import Any

Connection = Any
_TAKE = """
    INSERT INTO guard_counters (name, win, used, expires_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (name, win) DO UPDATE SET
        used = CASE WHEN guard_counters.expires_at <= $5 THEN excluded.used ELSE guard_counters.used + excluded.used END,
        expires_at = excluded.expires_at
    WHERE guard_counters.expires_at <= $5 OR guard_counters.used + excluded.used <= $6
    RETURNING used"""


async def take_counter(db: Connection, name: str, win: float, amount: int, limit: int, now: float,
                       expires_at: float) -> int | None:
    used = await db.fetchval(_TAKE, name, win, amount, expires_at, now, limit)
    return None if used is None else int(used)


async def give_counter(db: Connection, name: str, win: float, amount: int) -> None:
    await db.execute("UPDATE guard_counters SET used = GREATEST(used - $1, 0) WHERE name = $2 AND win = $3",
                     amount, name, win)


async def read_counter(db: Connection, name: str, win: float, now: float) -> int:
    used = await db.fetchval("SELECT used FROM guard_counters WHERE name = $1 AND win = $2 AND expires_at > $3",
                             name, win, now)
    return 0 if used is None else int(used)


async def prune_counters(db: Connection, now: float) -> int:
    return int((await db.execute("DELETE FROM guard_counters WHERE expires_at <= $1", now)).split()[-1])


async def p011_audit_call_ids(db: Connection) -> None:
    """SQLite's m016: the pipeline's id of each call in its audit row."""
    await db.execute("ALTER TABLE audit ADD COLUMN call_id text")
    await db.execute("CREATE INDEX audit_by_call ON audit (call_id) WHERE call_id IS NOT NULL")


async def p012_limit_counters(db: Connection) -> None:
    """SQLite's m017: the counters of ``guards.limits``."""
    await db.execute("""CREATE TABLE guard_counters (
        name       text NOT NULL,
        win        double precision NOT NULL,
        used       bigint NOT NULL,
        expires_at double precision NOT NULL,
        PRIMARY KEY (name, win))""")
    await db.execute("CREATE INDEX guard_counters_by_expiry ON guard_counters (expires_at)")
