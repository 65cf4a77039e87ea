"""PostgreSQL SQL of the memory extraction queue (same rows as ``sqlite_jobs``), safe for replicas.

Scheduling takes a transaction-scoped advisory lock so two replicas never turn the same messages
into jobs; a claim picks the oldest ready job with ``FOR UPDATE SKIP LOCKED``, so two claimers never
get the same one and never wait for each other. Leases are timed by the database's clock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hermes_hub.storage import postgres_memory as mem
from hermes_hub.storage.postgres_sessions import NOW
from hermes_hub.storage.records import ExtractionJob, MemoryEvent, MemoryRecord, SummaryJob
from hermes_hub.storage.sqlite_jobs import SCHEDULE_MARK
from hermes_hub.storage.sqlite_sessions import dt

Connection = Any
SCHEDULE_LOCK = 0x6A6F6273  # "jobs"
_JOB_COLS = "id, user_id, session_id, first_pk, last_pk, attempts"


async def schedule(db: Connection, limit: int) -> int:
    await db.execute("SELECT pg_advisory_xact_lock($1)", SCHEDULE_LOCK)
    rows = await db.fetch("SELECT pk, user_id, session_id, role FROM messages WHERE pk > $1 ORDER BY pk LIMIT $2",
                          await mem.mark(db, SCHEDULE_MARK), limit)
    if not rows:
        return 0
    runs: dict[tuple[str, str], list[int]] = {}
    for pk, uid, sid, role in rows:
        if role in ("user", "assistant"):
            runs.setdefault((uid, sid), []).append(pk)
    await db.executemany(f"INSERT INTO extraction_jobs (user_id, session_id, first_pk, last_pk, created_at) "
                         f"VALUES ($1, $2, $3, $4, {NOW}) ON CONFLICT DO NOTHING",
                         [(uid, sid, pks[0], pks[-1]) for (uid, sid), pks in runs.items()])
    await mem.set_mark(db, SCHEDULE_MARK, rows[-1][0])
    return len(runs)


async def claim(db: Connection, owner: str, lease: float) -> ExtractionJob | None:
    row = await db.fetchrow(
        f"UPDATE extraction_jobs SET state = 'running', owner = $1, claimed_until = {NOW} + $2, "
        f"attempts = attempts + 1 WHERE id = (SELECT id FROM extraction_jobs WHERE "
        f"(state = 'pending' AND not_before <= {NOW}) OR (state = 'running' AND claimed_until < {NOW}) "
        f"ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING {_JOB_COLS}", owner, lease)
    return ExtractionJob(*row) if row else None


async def job_messages(db: Connection, job: ExtractionJob, context: int) -> list[tuple[Any, ...]]:
    earlier = await db.fetch("SELECT pk, id, role, content, created_at FROM messages WHERE session_id = $1 AND "
                             "user_id = $2 AND pk < $3 AND role IN ('user', 'assistant') ORDER BY pk DESC LIMIT $4",
                             job.session_id, job.user_id, job.first_pk, context)
    new = await db.fetch("SELECT pk, id, role, content, created_at FROM messages WHERE session_id = $1 AND "
                         "user_id = $2 AND pk BETWEEN $3 AND $4 AND role IN ('user', 'assistant') ORDER BY pk",
                         job.session_id, job.user_id, job.first_pk, job.last_pk)
    return [(pk, mid, role, content, dt(at)) for pk, mid, role, content, at in [*reversed(earlier), *new]]


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
        known = await mem.find_duplicate(db, record.user_id, key) if supersedes is None else None
        if known is not None:
            await mem.add_event(db, MemoryEvent(known, record.user_id, record.created_at, "confirmed", event.actor,
                                                event.reason))
            continue
        await mem.insert_memory(db, record, key, event, supersedes)
    for event in events:
        await mem.add_event(db, event)
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
                                               await mem.mark(db, SCHEDULE_MARK)))
    return out


# --- session summaries (one job per session; see SQLite's m010) -----------------------------------

async def request_summary(db: Connection, user_id: str, session_id: str, upto_seq: int, min_new: int) -> bool:
    covered = await db.fetchval("SELECT summary_upto FROM sessions WHERE id = $1 AND user_id = $2",
                                session_id, user_id)
    if covered is None or upto_seq - covered < max(1, min_new):
        return False
    await db.execute(f"INSERT INTO summary_jobs AS j (session_id, user_id, upto_seq, created_at) VALUES ($1, $2, $3, "
                     f"{NOW}) ON CONFLICT (session_id) DO UPDATE SET upto_seq = greatest(j.upto_seq, excluded.upto_seq), "
                     "state = CASE WHEN j.state = 'running' THEN j.state ELSE 'pending' END, "
                     "attempts = CASE WHEN j.state IN ('done', 'failed') THEN 0 ELSE j.attempts END, "
                     "not_before = CASE WHEN j.state IN ('done', 'failed') THEN 0 ELSE j.not_before END",
                     session_id, user_id, upto_seq)
    return True


async def claim_summary(db: Connection, owner: str, lease: float) -> SummaryJob | None:
    row = await db.fetchrow(
        f"UPDATE summary_jobs SET state = 'running', owner = $1, claimed_until = {NOW} + $2, claimed_upto = upto_seq, "
        f"attempts = attempts + 1 WHERE session_id = (SELECT j.session_id FROM summary_jobs j WHERE "
        f"(j.state = 'pending' AND j.not_before <= {NOW}) OR (j.state = 'running' AND j.claimed_until < {NOW}) "
        f"ORDER BY j.created_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING session_id, user_id, upto_seq, attempts",
        owner, lease)
    if row is None:
        return None
    sid, uid, upto, attempts = row
    covered, summary = await db.fetchrow("SELECT summary_upto, summary FROM sessions WHERE id = $1", sid)
    return SummaryJob(sid, uid, upto, covered, summary, attempts)


async def renew_summary(db: Connection, session_id: str, owner: str, lease: float) -> bool:
    return await db.fetchval(f"UPDATE summary_jobs SET claimed_until = {NOW} + $1 WHERE session_id = $2 AND "
                             "owner = $3 AND state = 'running' RETURNING true", lease, session_id, owner) is not None


async def finish_summary(db: Connection, session_id: str, owner: str, summary: str) -> bool:
    row = await db.fetchrow("SELECT claimed_upto, upto_seq FROM summary_jobs WHERE session_id = $1 AND owner = $2 "
                            "AND state = 'running' FOR UPDATE", session_id, owner)
    if row is None:
        return False
    claimed, wanted = row
    await db.execute("UPDATE sessions SET summary = $1, summary_upto = $2 WHERE id = $3 AND summary_upto < $2",
                     summary, claimed, session_id)
    state = "pending" if wanted > claimed else "done"
    await db.execute(f"UPDATE summary_jobs SET state = $1, owner = NULL, done_at = {NOW}, error = NULL, "
                     "attempts = CASE WHEN $1 = 'pending' THEN 0 ELSE attempts END WHERE session_id = $2",
                     state, session_id)
    return True


async def fail_summary(db: Connection, session_id: str, owner: str, error: str, retry_in: float | None) -> None:
    state = "failed" if retry_in is None else "pending"
    await db.execute(f"UPDATE summary_jobs SET state = $1, not_before = CASE WHEN $2::float8 IS NULL THEN 0 "
                     f"ELSE {NOW} + $2::float8 END, error = $3, owner = NULL, done_at = {NOW} "
                     "WHERE session_id = $4 AND owner = $5 AND state = 'running'",
                     state, retry_in, error, session_id, owner)


async def summary_counts(db: Connection) -> dict[str, int]:
    return {state: n for state, n in await db.fetch("SELECT state, COUNT(*) FROM summary_jobs GROUP BY state")}
