"""PostgreSQL SQL of session summaries: one durable job per session (the same rows as SQLite's),
claimed with ``FOR UPDATE SKIP LOCKED`` and leases timed by the database's clock."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.postgres.sessions import NOW
from hermes_hub.infra.storage.records import SummaryJob

Connection = Any

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
