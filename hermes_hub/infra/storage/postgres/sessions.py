"""PostgreSQL SQL for sessions, messages, search and session locks: async functions of a connection
that ``PostgresStore`` calls inside one transaction.

Appends take a transaction-scoped advisory lock (``APPEND_LOCK``): message keys then become visible
in key order, which background indexing relies on ("every key past the mark"), and a session's
``seq`` is computed without a race. Each append is a few milliseconds, so serialising them costs
little next to the model calls they record.

Session locks are lease rows timed by the database's clock (replicas' clocks may differ): a replica
killed with -9 stops renewing, and the next writer takes the lock once the lease has run out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from hermes_hub.infra.errors import InvalidInput, SessionBusy
from hermes_hub.infra.storage.locks import Lease
from hermes_hub.infra.storage.records import MessageRecord, NewMessage, SearchHit, SessionRecord
from hermes_hub.infra.storage.rows import (
    MESSAGE_COLS,
    SESSION_COLS,
    dumps,
    message_record,
    session_not_found,
    session_record,
    ts,
)
from hermes_hub.infra.storage.search import like_pattern, snippet, terms

Connection = Any
APPEND_LOCK = 0x6D736773  # "msgs"
TRGM_MIN_CHARS = 3  # pg_trgm's index serves a LIKE pattern only with a term of 3+ characters
RECENT_WINDOW = 2000  # newest messages searched first, before any index
NOW = "date_part('epoch', clock_timestamp())"  # double precision, the database's clock


async def insert_session(db: Connection, rec: SessionRecord) -> None:
    await db.execute(f"INSERT INTO sessions ({SESSION_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                     rec.id, rec.user_id, rec.title, ts(rec.created_at), ts(rec.updated_at), rec.summary,
                     rec.message_count)


async def get_session(db: Connection, user_id: str, session_id: str) -> SessionRecord:
    row = await db.fetchrow(f"SELECT {SESSION_COLS} FROM sessions WHERE id = $1 AND user_id = $2",
                            session_id, user_id)
    if row is None:
        raise session_not_found(session_id)
    return session_record(tuple(row))


async def list_sessions(db: Connection, user_id: str, limit: int,
                        after: tuple[datetime, str] | None) -> list[SessionRecord]:
    if after is None:
        rows = await db.fetch(f"SELECT {SESSION_COLS} FROM sessions WHERE user_id = $1 "
                              "ORDER BY updated_at DESC, id DESC LIMIT $2", user_id, limit)
    else:
        rows = await db.fetch(f"SELECT {SESSION_COLS} FROM sessions WHERE user_id = $1 AND (updated_at, id) < "
                              "($2, $3) ORDER BY updated_at DESC, id DESC LIMIT $4",
                              user_id, ts(after[0]), after[1], limit)
    return [session_record(tuple(r)) for r in rows]


async def update_session(db: Connection, user_id: str, session_id: str, updated_at: datetime, title: str | None,
                         summary: str | None) -> SessionRecord:
    row = await db.fetchrow(f"UPDATE sessions SET title = coalesce($1, title), summary = coalesce($2, summary), "
                            f"updated_at = $3 WHERE id = $4 AND user_id = $5 RETURNING {SESSION_COLS}",
                            title, summary, ts(updated_at), session_id, user_id)
    if row is None:
        raise session_not_found(session_id)
    return session_record(tuple(row))


async def delete_session(db: Connection, user_id: str, session_id: str) -> None:
    await _lock_session(db, user_id, session_id)
    await _refuse_if_locked(db, session_id, None)
    await db.execute("DELETE FROM sessions WHERE id = $1", session_id)  # messages and lock rows cascade


async def delete_user_sessions(db: Connection, user_id: str) -> int:
    busy = await db.fetchval(f"SELECT l.session_id FROM session_locks l JOIN sessions s ON s.id = l.session_id "
                             f"WHERE s.user_id = $1 AND l.expires_at > {NOW} LIMIT 1", user_id)
    if busy:
        raise SessionBusy(busy, "nothing was deleted")
    result = await db.execute("DELETE FROM sessions WHERE user_id = $1", user_id)
    return int(result.split()[-1])


async def _lock_session(db: Connection, user_id: str, session_id: str) -> None:
    """Hold the session row for this transaction (``NotFound`` unless it is the caller's)."""
    if await db.fetchval("SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2 FOR UPDATE",
                         session_id, user_id) is None:
        raise session_not_found(session_id)


async def append_messages(db: Connection, user_id: str, session_id: str, messages: Sequence[NewMessage],
                          lease: Lease | None) -> list[MessageRecord]:
    """One call of ``hermes_append`` (migration p004): lock, checks, seqs, rows and counts, one round trip."""
    if lease is not None and lease.session_id != session_id:
        raise InvalidInput(f"the lease passed is for session '{lease.session_id}', not '{session_id}'")
    try:
        last = await db.fetchval(
            "SELECT hermes_append($1, $2, $3, $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], "
            "$9::text[], $10::text[])", user_id, session_id, None if lease is None else lease.owner,
            [m.id for m in messages], [m.role for m in messages], [m.content for m in messages],
            [ts(m.created_at) for m in messages], [dumps(m.tool_calls) if m.tool_calls else None for m in messages],
            [m.tool_call_id for m in messages], [dumps(m.metadata) if m.metadata else None for m in messages])
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == "HHNF1":
            raise session_not_found(session_id) from None
        if exc.sqlstate == "HHBS1":
            raise SessionBusy(session_id) from None
        if exc.sqlstate == "HHBS2":
            raise SessionBusy(session_id, "your lock expired while held; take it again before writing") from None
        raise
    return [MessageRecord(m.id, session_id, user_id, seq, m.role, m.content, m.created_at, list(m.tool_calls),
                          m.tool_call_id, dict(m.metadata)) for seq, m in enumerate(messages, start=last + 1)]


async def import_session(db: Connection, rec: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
    await insert_session(db, rec)
    return await append_messages(db, rec.user_id, rec.id, messages, None)


async def list_messages(db: Connection, user_id: str, session_id: str, limit: int, after_seq: int | None,
                        before_seq: int | None, newest_first: bool) -> list[MessageRecord]:
    await get_session(db, user_id, session_id)  # the owner is checked here: the page reads the (session, seq) key only
    sql = f"SELECT {MESSAGE_COLS} FROM messages m WHERE m.session_id = $1"
    args: list[Any] = [session_id]
    if after_seq is not None:
        args.append(after_seq)
        sql += f" AND m.seq > ${len(args)}"
    if before_seq is not None:
        args.append(before_seq)
        sql += f" AND m.seq < ${len(args)}"
    args.append(limit)
    sql += f" ORDER BY m.seq {'DESC' if newest_first else 'ASC'} LIMIT ${len(args)}"
    return [message_record(tuple(r)) for r in await db.fetch(sql, *args)]


async def search_messages(db: Connection, user_id: str, query: str, limit: int,
                          session_id: str | None) -> list[SearchHit]:
    words = terms(query)
    if session_id is not None:
        await get_session(db, user_id, session_id)
    where, args = ["m.user_id = $1"], [user_id]
    if session_id is not None:
        args.append(session_id)
        where.append(f"m.session_id = ${len(args)}")
    for w in words:  # every term a case-insensitive substring; the trigram index serves terms of 3+ chars
        args.append(like_pattern(w))
        where.append(f"m.content ILIKE ${len(args)}")
    args.append(limit)
    cond = " AND ".join(where)
    select = f"SELECT {MESSAGE_COLS}, s.title FROM {{}} m JOIN sessions s ON s.id = m.session_id WHERE {cond} " \
             f"ORDER BY m.pk DESC LIMIT ${len(args)}"
    # A common term is found among the newest messages at once; a rare one would have the planner walk the
    # whole history, so when the newest RECENT_WINDOW do not fill the page, the trigram index finds every
    # match (OFFSET 0 keeps that apart from the ordering): the cost follows the hits, as with SQLite's FTS5.
    recent = f"(SELECT * FROM messages m WHERE {where[0]}{' AND ' + where[1] if session_id else ''} " \
             f"ORDER BY m.pk DESC LIMIT {RECENT_WINDOW})"
    rows = await db.fetch(select.format(recent), *args)
    if len(rows) < limit and any(len(w) >= TRGM_MIN_CHARS for w in words):
        rows = await db.fetch(select.format(f"(SELECT * FROM messages m WHERE {cond} OFFSET 0)"), *args)
    elif len(rows) < limit:  # only 1-2 character terms: no index serves them; scan the user's messages
        rows = await db.fetch(select.format("messages"), *args)
    hits = []
    for row in rows:
        msg = message_record(tuple(row)[:-1])
        hits.append(SearchHit(msg, row[-1], snippet(msg.content, words)))
    return hits


# --- session locks --------------------------------------------------------------------------------

async def _refuse_if_locked(db: Connection, session_id: str, lease: Lease | None) -> None:
    row = await db.fetchrow(f"SELECT owner, expires_at > {NOW} FROM session_locks WHERE session_id = $1", session_id)
    live = row is not None and row[1]
    if lease is None:
        if live:
            raise SessionBusy(session_id)
        return
    if lease.session_id != session_id:
        raise InvalidInput(f"the lease passed is for session '{lease.session_id}', not '{session_id}'")
    if not live or row[0] != lease.owner:
        raise SessionBusy(session_id, "your lock expired while held; take it again before writing")


async def acquire_lock(db: Connection, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
    await get_session(db, user_id, session_id)
    row = await db.fetchrow(
        f"INSERT INTO session_locks (session_id, owner, expires_at) VALUES ($1, $2, {NOW} + $3) "
        f"ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at "
        f"WHERE session_locks.expires_at <= {NOW} RETURNING owner", session_id, owner, ttl)
    return row is not None


async def renew_lock(db: Connection, session_id: str, owner: str, ttl: float) -> bool:
    row = await db.fetchrow(f"UPDATE session_locks SET expires_at = {NOW} + $1 WHERE session_id = $2 AND owner = $3 "
                            f"AND expires_at > {NOW} RETURNING 1", ttl, session_id, owner)
    return row is not None


async def release_lock(db: Connection, session_id: str, owner: str) -> None:
    await db.execute("DELETE FROM session_locks WHERE session_id = $1 AND owner = $2", session_id, owner)
