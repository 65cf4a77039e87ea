"""SQL of the memory extraction queue: scheduling new messages into jobs, claiming a job with a
lease, and finishing it together with the memories it decided on (see migration m008)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.records import ExtractionJob, MemoryEvent, MemoryRecord
from hermes_hub.infra.storage.rows import JOB_COLS, SCHEDULE_MARK, dt
from hermes_hub.infra.storage.sqlite import indexing, memories

Connection = Any


def schedule(db: Connection, limit: int) -> int:
    """Turn the conversation messages past the mark into one job per session; return how many jobs."""
    rows = db.execute("SELECT pk, user_id, session_id, role FROM messages WHERE pk > ? ORDER BY pk LIMIT ?",
                      (indexing.mark(db, SCHEDULE_MARK), limit)).fetchall()
    if not rows:
        return 0
    runs: dict[tuple[str, str], list[int]] = {}
    for pk, uid, sid, role in rows:
        if role in ("user", "assistant", "tool"):  # tool calls and results: what was done is remembered too
            runs.setdefault((uid, sid), []).append(pk)
    now = time.time()
    for (uid, sid), pks in runs.items():
        db.execute("INSERT OR IGNORE INTO extraction_jobs (user_id, session_id, first_pk, last_pk, created_at) "
                   "VALUES (?, ?, ?, ?, ?)", (uid, sid, pks[0], pks[-1], now))
    indexing.set_mark(db, SCHEDULE_MARK, rows[-1][0])
    return len(runs)


def claim(db: Connection, owner: str, lease: float) -> ExtractionJob | None:
    """The oldest job that is ready (or whose holder's lease ran out), now held by ``owner``."""
    now = time.time()
    row = db.execute(f"UPDATE extraction_jobs SET state = 'running', owner = ?, claimed_until = ?, "
                     f"attempts = attempts + 1 WHERE id = (SELECT id FROM extraction_jobs WHERE "
                     f"(state = 'pending' AND not_before <= ?) OR (state = 'running' AND claimed_until < ?) "
                     f"ORDER BY id LIMIT 1) RETURNING {JOB_COLS}", (owner, now + lease, now, now)).fetchone()
    return ExtractionJob(*row) if row else None


def job_messages(db: Connection, job: ExtractionJob, context: int) -> list[tuple[Any, ...]]:
    """(pk, id, role, content, created_at, tool_calls JSON or None) of the job's messages (tool rounds
    included), after up to ``context`` earlier user and assistant messages."""
    earlier = db.execute("SELECT pk, id, role, content, created_at, NULL FROM messages WHERE session_id = ? AND "
                         "user_id = ? AND pk < ? AND role IN ('user', 'assistant') ORDER BY pk DESC LIMIT ?",
                         (job.session_id, job.user_id, job.first_pk, context)).fetchall()
    new = db.execute("SELECT pk, id, role, content, created_at, tool_calls FROM messages WHERE session_id = ? AND "
                     "user_id = ? AND pk BETWEEN ? AND ? AND role IN ('user', 'assistant', 'tool') ORDER BY pk",
                     (job.session_id, job.user_id, job.first_pk, job.last_pk)).fetchall()
    return [(pk, mid, role, content, dt(at), calls) for pk, mid, role, content, at, calls in [*reversed(earlier), *new]]


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
        known = memories.find_duplicate(db, record.user_id, key) if supersedes is None else None
        if known is not None:  # already remembered (in other words or by another job): confirm it instead
            memories.add_event(db, MemoryEvent(known, record.user_id, record.created_at, "confirmed", event.actor,
                                              event.reason))
            continue
        memories.insert_memory(db, record, key, event, supersedes)
    for event in events:
        memories.add_event(db, event)
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
                                    (indexing.mark(db, SCHEDULE_MARK),)).fetchone()[0]
    return out
