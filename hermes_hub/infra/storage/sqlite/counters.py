"""SQL of the limits' counters (``guard_counters``): one row per counter and window, shared by replicas.

A counter is taken with one upsert that adds only while the sum stays within the limit (``RETURNING``
gives the new count, no row means the limit is reached), so two hubs on one database never both take
the last unit. A row whose ``expires_at`` has passed counts as empty.
"""

from __future__ import annotations

from typing import Any

Connection = Any
_TAKE = """
    INSERT INTO guard_counters (name, win, used, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (name, win) DO UPDATE SET
        used = CASE WHEN guard_counters.expires_at <= ? THEN excluded.used ELSE guard_counters.used + excluded.used END,
        expires_at = excluded.expires_at
    WHERE guard_counters.expires_at <= ? OR guard_counters.used + excluded.used <= ?
    RETURNING used"""


def take_counter(db: Connection, name: str, win: float, amount: int, limit: int, now: float,
                 expires_at: float) -> int | None:
    row = db.execute(_TAKE, (name, win, amount, expires_at, now, now, limit)).fetchone()
    return None if row is None else int(row[0])


def give_counter(db: Connection, name: str, win: float, amount: int) -> None:
    db.execute("UPDATE guard_counters SET used = MAX(used - ?, 0) WHERE name = ? AND win = ?", (amount, name, win))


def read_counter(db: Connection, name: str, win: float, now: float) -> int:
    row = db.execute("SELECT used FROM guard_counters WHERE name = ? AND win = ? AND expires_at > ?",
                     (name, win, now)).fetchone()
    return 0 if row is None else int(row[0])


def prune_counters(db: Connection, now: float) -> int:
    return db.execute("DELETE FROM guard_counters WHERE expires_at <= ?", (now,)).rowcount


def m018_limit_counters(db: Connection) -> None:
    """Counters of ``guards.limits``: calls in a minute, calls running, model tokens in a day."""
    db.execute("""
        CREATE TABLE guard_counters (
            name       TEXT NOT NULL,     -- the rule and whose count it is
            win        REAL NOT NULL,     -- the window's start (0: no window, a concurrency count)
            used       INTEGER NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (name, win)
        )""")
    db.execute("CREATE INDEX guard_counters_by_expiry ON guard_counters (expires_at)")
