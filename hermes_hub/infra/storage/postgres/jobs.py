"""PostgreSQL SQL of the memory extraction queue (the same rows as SQLite's), safe for replicas.

Scheduling takes a transaction-scoped advisory lock so two replicas never turn the same messages
into jobs; a claim picks the oldest ready job with ``FOR UPDATE SKIP LOCKED``, so two claimers never
get the same one and never wait for each other. Leases are timed by the database's clock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.postgres import indexing, memories
from hermes_hub.infra.storage.postgres.sessions import NOW
from hermes_hub.infra.storage.records import ExtractionJob, MemoryEvent, MemoryRecord
from hermes_hub.infra.storage.rows import JOB_COLS, SCHEDULE_MARK, dt

Connection = Any
SCHEDULE_LOCK = 0x6A6F6273  # "jobs"


async def schedule(db: Connection, limit: int) -> int:
    await db.execute("SELECT pg_advisory_xact_lock($1)", SCHEDULE_LOCK)
    rows = await db.fetch("SELECT pk, user_id, session_id, role FROM messages WHERE pk > $1 ORDER BY pk LIMIT $2",
                          await indexing.mark(db, SCHEDULE_MARK), limit)
    if not rows:
        return 0
    runs: dict[tuple[str, str], list[int]] = {}
    for pk, uid, sid, role in rows:
        if role in ("user", "assistant", "tool"):  # tool calls and results: what was done is remembered too
            runs.setdefault((uid, sid), []).append(pk)
    await db.executemany(f"INSERT INTO extraction_jobs (user_id, session_id, first_pk, last_pk, created_at) "
                         f"VALUES ($1, $2, $3, $4, {NOW}) ON CONFLICT DO NOTHING",
                         [(uid, sid, pks[0], pks[-1]) for (uid, sid), pks in runs.items()])
    await indexing.set_mark(db, SCHEDULE_MARK, rows[-1][0])
    return len(runs)


async def claim(db: Connection, owner: str, lease: float) -> ExtractionJob | None:
    row = await db.fetchrow(
        f"UPDATE extraction_jobs SET state = 'running', owner = $1, claimed_until = {NOW} + $2, "
        f"attempts = attempts + 1 WHERE id = (SELECT id FROM extraction_jobs WHERE "
        f"(state = 'pending' AND not_before <= {NOW}) OR (state = 'running' AND claimed_until < {NOW}) "
        f"ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING {JOB_COLS}", owner, lease)
    return ExtractionJob(*row) if row else None


async def job_messages(db: Connection, job: ExtractionJob, context: int) -> list[tuple[Any, ...]]:
    earlier = await db.fetch("SELECT pk, id, role, content, created_at, NULL FROM messages WHERE session_id = $1 AND "
                             "user_id = $2 AND pk < $3 AND role IN ('user', 'assistant') ORDER BY pk DESC LIMIT $4",
                             job.session_id, job.user_id, job.first_pk, context)
    new = await db.fetch("SELECT pk, id, role, content, created_at, tool_calls FROM messages WHERE session_id = $1 AND "
                         "user_id = $2 AND pk BETWEEN $3 AND $4 AND role IN ('user', 'assistant', 'tool') ORDER BY pk",
                         job.session_id, job.user_id, job.first_pk, job.last_pk)
    return [(pk, mid, role, content, dt(at), calls) for pk, mid, role, content, at, calls in [*reversed(earlier), *new]]


async def renew(db: Connection, job_id: int, owner: str, lease: float) -> bool:
    row = await db.fetchrow(f"UPDATE extraction_jobs SET claimed_until = {NOW} + $1 WHERE id = $2 AND owner = $3 "
                            f"AND state = 'running' RETURNING 1", lease, job_id, owner)
    return row is not None


async def _holds(db: Connection, job_id: int, owner: str) -> bool:
    """Whether ``owner`` holds the job, locking its row until the transaction ends."""
    row = await db.fetchrow("SELECT state, owner FROM extraction_jobs WHERE id = $1 FOR UPDATE", job_id)
    return row is not None and row[0] == "running" and row[1] == owner


async def finish(db: Connection, job_id: int, owner: str,
                 writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
                 events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
    if not await _holds(db, job_id, owner):
        return False
    for record, key, event, supersedes in writes:
        known = await memories.find_duplicate(db, record.user_id, key) if supersedes is None else None
        if known is not None:
            await memories.add_event(db, MemoryEvent(known, record.user_id, record.created_at, "confirmed", event.actor,
                                                event.reason))
            continue
        await memories.insert_memory(db, record, key, event, supersedes)
    for event in events:
        await memories.add_event(db, event)
    await db.execute(f"UPDATE extraction_jobs SET state = 'done', done_at = {NOW}, result = $1, owner = NULL "
                     f"WHERE id = $2", json.dumps(result, ensure_ascii=False), job_id)
    return True


async def fail(db: Connection, job_id: int, owner: str, error: str, retry_in: float | None) -> None:
    if not await _holds(db, job_id, owner):
        return
    detail = json.dumps({"error": error}, ensure_ascii=False)
    if retry_in is None:
        await db.execute(f"UPDATE extraction_jobs SET state = 'failed', done_at = {NOW}, result = $1, owner = NULL "
                         f"WHERE id = $2", detail, job_id)
    else:
        await db.execute(f"UPDATE extraction_jobs SET state = 'pending', not_before = {NOW} + $1, result = $2, "
                         f"owner = NULL WHERE id = $3", retry_in, detail, job_id)


async def counts(db: Connection) -> dict[str, int]:
    out = {state: n for state, n in await db.fetch("SELECT state, COUNT(*) FROM extraction_jobs GROUP BY state")}
    out["unscheduled"] = int(await db.fetchval("SELECT COUNT(*) FROM messages WHERE pk > $1",
                                               await indexing.mark(db, SCHEDULE_MARK)))
    return out
