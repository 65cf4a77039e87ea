"""SQL of the memory extraction queue: scheduling new messages into jobs, claiming a job with a
lease, and finishing it together with the memories it decided on (see migration m008)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.storage import sqlite_memory as mem_sql
from hermes_hub.storage.records import ExtractionJob, MemoryEvent, MemoryRecord, SummaryJob
from hermes_hub.storage.sqlite_sessions import dt

Connection = Any
SCHEDULE_MARK = "extraction_messages"
_JOB_COLS = "id, user_id, session_id, first_pk, last_pk, attempts"


def schedule(db: Connection, limit: int) -> int:
    """Turn the conversation messages past the mark into one job per session; return how many jobs."""
    rows = db.execute("SELECT pk, user_id, session_id, role FROM messages WHERE pk > ? ORDER BY pk LIMIT ?",
                      (mem_sql.mark(db, SCHEDULE_MARK), limit)).fetchall()
    if not rows:
        return 0
    runs: dict[tuple[str, str], list[int]] = {}
    for pk, uid, sid, role in rows:
        if role in ("user", "assistant"):
            runs.setdefault((uid, sid), []).append(pk)
    now = time.time()
    for (uid, sid), pks in runs.items():
        db.execute("INSERT OR IGNORE INTO extraction_jobs (user_id, session_id, first_pk, last_pk, created_at) "
                   "VALUES (?, ?, ?, ?, ?)", (uid, sid, pks[0], pks[-1], now))
    mem_sql.set_mark(db, SCHEDULE_MARK, rows[-1][0])
    return len(runs)


def claim(db: Connection, owner: str, lease: float) -> ExtractionJob | None:
    """The oldest job that is ready (or whose holder's lease ran out), now held by ``owner``."""
    now = time.time()
    row = db.execute(f"UPDATE extraction_jobs SET state = 'running', owner = ?, claimed_until = ?, "
                     f"attempts = attempts + 1 WHERE id = (SELECT id FROM extraction_jobs WHERE "
                     f"(state = 'pending' AND not_before <= ?) OR (state = 'running' AND claimed_until < ?) "
                     f"ORDER BY id LIMIT 1) RETURNING {_JOB_COLS}", (owner, now + lease, now, now)).fetchone()
    return ExtractionJob(*row) if row else None


def job_messages(db: Connection, job: ExtractionJob, context: int) -> list[tuple[Any, ...]]:
    """(pk, id, role, content, created_at) of the job's messages, after up to ``context`` earlier ones."""
    earlier = db.execute("SELECT pk, id, role, content, created_at FROM messages WHERE session_id = ? AND "
                         "user_id = ? AND pk < ? AND role IN ('user', 'assistant') ORDER BY pk DESC LIMIT ?",
                         (job.session_id, job.user_id, job.first_pk, context)).fetchall()
    new = db.execute("SELECT pk, id, role, content, created_at FROM messages WHERE session_id = ? AND user_id = ? "
                     "AND pk BETWEEN ? AND ? AND role IN ('user', 'assistant') ORDER BY pk",
                     (job.session_id, job.user_id, job.first_pk, job.last_pk)).fetchall()
    return [(pk, mid, role, content, dt(at)) for pk, mid, role, content, at in [*reversed(earlier), *new]]


def renew(db: Connection, job_id: int, owner: str, lease: float) -> bool:
    """Push the lease out while the holder works; False if it no longer holds the job."""
    cur = db.execute("UPDATE extraction_jobs SET claimed_until = ? WHERE id = ? AND owner = ? AND state = 'running'",
                     (time.time() + lease, job_id, owner))
    return cur.rowcount == 1


def _holds(db: Connection, job_id: int, owner: str) -> bool:
    row = db.execute("SELECT state, owner FROM extraction_jobs WHERE id = ?", (job_id,)).fetchone()
    return row is not None and row[0] == "running" and row[1] == owner


def finish(db: Connection, job_id: int, owner: str, writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
           events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
    """Write the job's memories and events and mark it done; False (nothing written) if ``owner``
    no longer holds it (its lease ran out and another worker took it)."""
    if not _holds(db, job_id, owner):
        return False
    for record, key, event, supersedes in writes:
        known = mem_sql.find_duplicate(db, record.user_id, key) if supersedes is None else None
        if known is not None:  # already remembered (in other words or by another job): confirm it instead
            mem_sql.add_event(db, MemoryEvent(known, record.user_id, record.created_at, "confirmed", event.actor,
                                              event.reason))
            continue
        mem_sql.insert_memory(db, record, key, event, supersedes)
    for event in events:
        mem_sql.add_event(db, event)
    db.execute("UPDATE extraction_jobs SET state = 'done', done_at = ?, result = ?, owner = NULL WHERE id = ?",
               (time.time(), json.dumps(result, ensure_ascii=False), job_id))
    return True


def fail(db: Connection, job_id: int, owner: str, error: str, retry_in: float | None) -> None:
    """Give the job back to be retried in ``retry_in`` seconds, or mark it failed (``None``)."""
    if not _holds(db, job_id, owner):
        return
    if retry_in is None:
        db.execute("UPDATE extraction_jobs SET state = 'failed', done_at = ?, result = ?, owner = NULL WHERE id = ?",
                   (time.time(), json.dumps({"error": error}, ensure_ascii=False), job_id))
    else:
        db.execute("UPDATE extraction_jobs SET state = 'pending', not_before = ?, result = ?, owner = NULL "
                   "WHERE id = ?", (time.time() + retry_in, json.dumps({"error": error}, ensure_ascii=False), job_id))


def counts(db: Connection) -> dict[str, int]:
    out = {state: n for state, n in db.execute("SELECT state, COUNT(*) FROM extraction_jobs GROUP BY state")}
    out["unscheduled"] = db.execute("SELECT COUNT(*) FROM messages WHERE pk > ?",
                                    (mem_sql.mark(db, SCHEDULE_MARK),)).fetchone()[0]
    return out


# --- session summaries (migration m010) ------------------------------------------------------------

_SUMMARY_READY = ("(j.state = 'pending' AND j.not_before <= :now) OR (j.state = 'running' AND j.claimed_until < :now)")


def request_summary(db: Connection, user_id: str, session_id: str, upto_seq: int, min_new: int) -> bool:
    """Ask for the session's messages up to ``upto_seq`` to be folded into its summary; False when fewer
    than ``min_new`` of them are not in it yet (or the session is not ``user_id``'s)."""
    row = db.execute("SELECT summary_upto FROM sessions WHERE id = ? AND user_id = ?", (session_id, user_id)).fetchone()
    if row is None or upto_seq - row[0] < max(1, min_new):
        return False
    db.execute("INSERT INTO summary_jobs (session_id, user_id, upto_seq, created_at) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (session_id) DO UPDATE SET upto_seq = max(upto_seq, excluded.upto_seq), "
               "state = CASE WHEN state = 'running' THEN state ELSE 'pending' END, "
               "attempts = CASE WHEN state IN ('done', 'failed') THEN 0 ELSE attempts END, "
               "not_before = CASE WHEN state IN ('done', 'failed') THEN 0 ELSE not_before END",
               (session_id, user_id, upto_seq, time.time()))
    return True


def claim_summary(db: Connection, owner: str, lease: float) -> SummaryJob | None:
    now = time.time()
    row = db.execute(f"UPDATE summary_jobs SET state = 'running', owner = :owner, claimed_until = :until, "
                     f"claimed_upto = upto_seq, attempts = attempts + 1 WHERE session_id = (SELECT j.session_id "
                     f"FROM summary_jobs j WHERE {_SUMMARY_READY} ORDER BY j.created_at LIMIT 1) "
                     f"RETURNING session_id, user_id, upto_seq, attempts",
                     {"owner": owner, "until": now + lease, "now": now}).fetchone()
    if row is None:
        return None
    sid, uid, upto, attempts = row
    summary_upto, summary = db.execute("SELECT summary_upto, summary FROM sessions WHERE id = ?", (sid,)).fetchone()
    return SummaryJob(sid, uid, upto, summary_upto, summary, attempts)


def renew_summary(db: Connection, session_id: str, owner: str, lease: float) -> bool:
    cur = db.execute("UPDATE summary_jobs SET claimed_until = ? WHERE session_id = ? AND owner = ? AND "
                     "state = 'running'", (time.time() + lease, session_id, owner))
    return cur.rowcount == 1


def finish_summary(db: Connection, session_id: str, owner: str, summary: str) -> bool:
    """Store the summary as covering what the holder claimed; the job goes back to pending if more was
    asked meanwhile. False (nothing written) if ``owner`` no longer holds the job."""
    row = db.execute("SELECT claimed_upto, upto_seq FROM summary_jobs WHERE session_id = ? AND owner = ? AND "
                     "state = 'running'", (session_id, owner)).fetchone()
    if row is None:
        return False
    claimed, wanted = row
    db.execute("UPDATE sessions SET summary = ?, summary_upto = ? WHERE id = ? AND summary_upto < ?",
               (summary, claimed, session_id, claimed))
    state = "pending" if wanted > claimed else "done"
    db.execute("UPDATE summary_jobs SET state = ?, owner = NULL, done_at = ?, error = NULL, "
               "attempts = CASE WHEN ? = 'pending' THEN 0 ELSE attempts END WHERE session_id = ?",
               (state, time.time(), state, session_id))
    return True


def fail_summary(db: Connection, session_id: str, owner: str, error: str, retry_in: float | None) -> None:
    state, not_before = ("failed", 0.0) if retry_in is None else ("pending", time.time() + retry_in)
    db.execute("UPDATE summary_jobs SET state = ?, not_before = ?, error = ?, owner = NULL, done_at = ? "
               "WHERE session_id = ? AND owner = ? AND state = 'running'",
               (state, not_before, error, time.time(), session_id, owner))


def summary_counts(db: Connection) -> dict[str, int]:
    return {state: n for state, n in db.execute("SELECT state, COUNT(*) FROM summary_jobs GROUP BY state")}


class QueueMethods:
    """The ``ExtractionQueue`` and ``SummaryQueue`` parts of ``SQLiteStore`` (which supplies ``_read``/``_write``)."""

    _read: Any
    _write: Any

    # --- memory extraction queue -------------------------------------------------------------------

    async def schedule_extraction(self, limit: int = 1000) -> int:
        return await self._write(schedule, limit)

    async def claim_extraction(self, owner: str, *, lease: float) -> ExtractionJob | None:
        return await self._write(claim, owner, lease)

    async def renew_extraction(self, job_id: int, owner: str, *, lease: float) -> bool:
        return await self._write(renew, job_id, owner, lease)

    async def extraction_messages(self, job: ExtractionJob, *, context: int) -> list[tuple[Any, ...]]:
        return await self._read(job_messages, job, context)

    async def finish_extraction(self, job_id: int, owner: str,
                                writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
                                events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
        return await self._write(finish, job_id, owner, list(writes), list(events), result)

    async def fail_extraction(self, job_id: int, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._write(fail, job_id, owner, error, retry_in)

    async def extraction_counts(self) -> dict[str, int]:
        return await self._read(counts)

    # --- session summaries -------------------------------------------------------------------------

    async def request_summary(self, user_id: str, session_id: str, upto_seq: int, *, min_new: int = 1) -> bool:
        return await self._write(request_summary, user_id, session_id, upto_seq, min_new)

    async def claim_summary(self, owner: str, *, lease: float) -> SummaryJob | None:
        return await self._write(claim_summary, owner, lease)

    async def renew_summary(self, session_id: str, owner: str, *, lease: float) -> bool:
        return await self._write(renew_summary, session_id, owner, lease)

    async def finish_summary(self, session_id: str, owner: str, summary: str) -> bool:
        return await self._write(finish_summary, session_id, owner, summary)

    async def fail_summary(self, session_id: str, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._write(fail_summary, session_id, owner, error, retry_in)

    async def summary_counts(self) -> dict[str, int]:
        return await self._read(summary_counts)
