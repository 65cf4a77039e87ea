"""Background indexing claimed per batch, so replicas sharing one database index each row once.

An index (message terms, the vectors of one embedder) has a mark: every row up to it is indexed.
Past the mark, a replica claims the next batch, a key range ``(after_pk, last_pk]`` with a lease
(``index_claims``), and other replicas claim the ranges after it. A batch's index rows are written
in the transaction that marks its claim done, only if the claim is still the writer's; the mark
then moves over every done batch that follows it. A replica killed mid-batch stops renewing its
lease; once the lease has run out the next claimer takes the batch over (the same range), and the
late writer, should it come back, finds the claim gone and writes nothing.

Every claim and finish holds a transaction-scoped advisory lock per index, so they are serial per
index: each is a few short statements, while the work between them (embedding) is not locked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Connection = Any
NOW = "date_part('epoch', clock_timestamp())"  # the database's clock: replicas' clocks may differ
# fetch(db, after_pk, last_pk or None, limit or None): the rows in (after_pk, last_pk], oldest first
Fetch = Callable[[Connection, int, int | None, int | None], Awaitable[list[tuple[Any, ...]]]]


async def _lock(db: Connection, name: str) -> None:
    await db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", "index:" + name)


async def claim(db: Connection, name: str, owner: str, lease: float, limit: int, fetch: Fetch) -> list[tuple[Any, ...]]:
    """The rows of the batch ``owner`` now holds: one whose lease ran out (or its own, unfinished)
    first, else the next ``limit`` rows past every claim; [] when nothing is left to claim."""
    await _lock(db, name)
    while (row := await db.fetchrow(f"SELECT after_pk, last_pk FROM index_claims WHERE name = $1 AND NOT done AND "
                                    f"(claimed_until <= {NOW} OR owner = $2) AND last_pk > coalesce((SELECT last_pk "
                                    f"FROM index_marks WHERE name = $1), 0) ORDER BY after_pk LIMIT 1",
                                    name, owner)) is not None:
        after, last = row
        rows = await fetch(db, after, last, None)
        if rows:
            await db.execute(f"UPDATE index_claims SET owner = $1, claimed_until = {NOW} + $2 WHERE name = $3 AND "
                             f"after_pk = $4", owner, lease, name, after)
            return rows
        await _done(db, name, after)  # every row of the abandoned batch was deleted meanwhile
    start = await db.fetchval("SELECT greatest((SELECT last_pk FROM index_marks WHERE name = $1), "
                              "(SELECT max(last_pk) FROM index_claims WHERE name = $1), 0)", name)
    rows = await fetch(db, start, None, limit)
    if rows:
        await db.execute(f"INSERT INTO index_claims (name, after_pk, last_pk, owner, claimed_until) "
                         f"VALUES ($1, $2, $3, $4, {NOW} + $5)", name, start, rows[-1][0], owner, lease)
    return rows


async def renew(db: Connection, name: str, owner: str, lease: float) -> bool:
    row = await db.fetchrow(f"UPDATE index_claims SET claimed_until = {NOW} + $1 WHERE name = $2 AND owner = $3 AND "
                            f"NOT done RETURNING 1", lease, name, owner)
    return row is not None


async def finish(db: Connection, name: str, owner: str, last_pk: int) -> bool:
    """Mark done the batch of ``owner`` that holds ``last_pk`` and move the mark; False (and nothing
    may be written) when the claim is no longer this owner's: another replica took it over."""
    await _lock(db, name)
    after = await db.fetchval("SELECT after_pk FROM index_claims WHERE name = $1 AND owner = $2 AND NOT done AND "
                              "after_pk < $3 AND last_pk >= $3", name, owner, last_pk)
    if after is None:
        return False
    await _done(db, name, after)
    return True


async def _done(db: Connection, name: str, after: int) -> None:
    await db.execute("UPDATE index_claims SET done = true WHERE name = $1 AND after_pk = $2", name, after)
    mark = int(await db.fetchval("SELECT coalesce((SELECT last_pk FROM index_marks WHERE name = $1), 0)", name))
    while (last := await db.fetchval("DELETE FROM index_claims WHERE name = $1 AND after_pk = $2 AND done "
                                     "RETURNING last_pk", name, mark)) is not None:
        mark = last  # the mark moves over each done batch that follows it, and no further
    await db.execute("DELETE FROM index_claims WHERE name = $1 AND last_pk <= $2", name, mark)
    await db.execute("INSERT INTO index_marks (name, last_pk) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE "
                     "SET last_pk = greatest(index_marks.last_pk, excluded.last_pk)", name, mark)


async def forget(db: Connection, name: str) -> None:
    """The index is reset or dropped: its claims go with its mark."""
    await db.execute("DELETE FROM index_claims WHERE name = $1", name)
