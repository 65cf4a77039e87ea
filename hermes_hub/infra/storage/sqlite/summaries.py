"""SQL of session summaries (migration m010): one durable job per session asking for its older
messages to be folded into its stored summary, claimed with a lease."""

from __future__ import annotations

import time
from typing import Any

from hermes_hub.infra.storage.records import SummaryJob

Connection = Any

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
