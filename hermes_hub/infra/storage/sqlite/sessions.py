"""SQL for sessions, messages, search and session locks: plain functions of a connection.

``SQLiteStore`` runs each in a worker thread, writes on its single writer connection inside
``BEGIN IMMEDIATE``, reads on a reader connection inside one read transaction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hermes_hub.infra.errors import InvalidInput, SessionBusy
from hermes_hub.infra.storage.locks import Lease
from hermes_hub.infra.storage.records import (
    MessageRecord,
    NewMessage,
    SearchHit,
    SessionRecord,
)
from hermes_hub.infra.storage.rows import (
    MESSAGE_COLS,
    SESSION_COLS,
    dumps,
    message_record,
    session_not_found,
    session_record,
    ts,
)
from hermes_hub.infra.storage.search import fts_phrase, like_pattern, snippet, terms

Connection = Any
FTS_MIN_CHARS = 3  # the trigram index cannot match shorter terms; those fall back to LIKE


# --- sessions -------------------------------------------------------------------------------------

def insert_session(db: Connection, rec: SessionRecord) -> None:
    db.execute(f"INSERT INTO sessions ({SESSION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (rec.id, rec.user_id, rec.title, ts(rec.created_at), ts(rec.updated_at), rec.summary,
                rec.message_count))


def get_session(db: Connection, user_id: str, session_id: str) -> SessionRecord:
    row = db.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE id = ? AND user_id = ?",
                     (session_id, user_id)).fetchone()
    if row is None:
        raise session_not_found(session_id)
    return session_record(row)


def list_sessions(db: Connection, user_id: str, limit: int, after: tuple[datetime, str] | None) -> list[SessionRecord]:
    if after is None:
        rows = db.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE user_id = ? "
                          "ORDER BY updated_at DESC, id DESC LIMIT ?", (user_id, limit))
    else:
        rows = db.execute(f"SELECT {SESSION_COLS} FROM sessions WHERE user_id = ? AND (updated_at, id) < (?, ?) "
                          "ORDER BY updated_at DESC, id DESC LIMIT ?", (user_id, ts(after[0]), after[1], limit))
    return [session_record(r) for r in rows]


def update_session(db: Connection, user_id: str, session_id: str, updated_at: datetime, title: str | None,
                   summary: str | None) -> SessionRecord:
    cur = db.execute("UPDATE sessions SET title = coalesce(?, title), summary = coalesce(?, summary), "
                     "updated_at = ? WHERE id = ? AND user_id = ?",
                     (title, summary, ts(updated_at), session_id, user_id))
    if cur.rowcount == 0:
        raise session_not_found(session_id)
    return get_session(db, user_id, session_id)


def delete_session(db: Connection, user_id: str, session_id: str) -> None:
    get_session(db, user_id, session_id)
    _refuse_if_locked(db, session_id, None)
    db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    db.execute("DELETE FROM session_locks WHERE session_id = ?", (session_id,))
    db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def delete_user_sessions(db: Connection, user_id: str) -> int:
    busy = db.execute("SELECT l.session_id FROM session_locks l JOIN sessions s ON s.id = l.session_id "
                      "WHERE s.user_id = ? AND l.expires_at > ? LIMIT 1", (user_id, time.time())).fetchone()
    if busy:
        raise SessionBusy(busy[0], "nothing was deleted")
    db.execute("DELETE FROM messages WHERE user_id = ?", (user_id,))
    db.execute("DELETE FROM session_locks WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)",
               (user_id,))
    return db.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,)).rowcount


# --- messages -------------------------------------------------------------------------------------

def append_messages(db: Connection, user_id: str, session_id: str, messages: Sequence[NewMessage],
                    lease: Lease | None) -> list[MessageRecord]:
    get_session(db, user_id, session_id)
    _refuse_if_locked(db, session_id, lease)
    (last,) = db.execute("SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)).fetchone()
    out = []
    for seq, m in enumerate(messages, start=last + 1):
        db.execute("INSERT INTO messages (id, session_id, user_id, seq, role, content, created_at, tool_calls, "
                   "tool_call_id, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (m.id, session_id, user_id, seq, m.role, m.content, ts(m.created_at),
                    dumps(m.tool_calls) if m.tool_calls else None, m.tool_call_id,
                    dumps(m.metadata) if m.metadata else None))
        out.append(MessageRecord(m.id, session_id, user_id, seq, m.role, m.content, m.created_at,
                                 list(m.tool_calls), m.tool_call_id, dict(m.metadata)))
    if out:  # times may come in any order (imported history): the session's activity is the latest one
        db.execute("UPDATE sessions SET message_count = message_count + ?, updated_at = max(updated_at, ?) "
                   "WHERE id = ?", (len(out), ts(max(m.created_at for m in messages)), session_id))
    return out


def import_session(db: Connection, rec: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
    insert_session(db, rec)
    return append_messages(db, rec.user_id, rec.id, messages, None)


def list_messages(db: Connection, user_id: str, session_id: str, limit: int, after_seq: int | None,
                  before_seq: int | None, newest_first: bool) -> list[MessageRecord]:
    get_session(db, user_id, session_id)
    # Keyset on the (session_id, seq) unique index: the cost is the page, whatever the history length.
    sql = f"SELECT {MESSAGE_COLS} FROM messages m WHERE m.session_id = ? AND m.user_id = ?"
    args: list[Any] = [session_id, user_id]
    if after_seq is not None:
        sql += " AND m.seq > ?"
        args.append(after_seq)
    if before_seq is not None:
        sql += " AND m.seq < ?"
        args.append(before_seq)
    sql += f" ORDER BY m.seq {'DESC' if newest_first else 'ASC'} LIMIT ?"
    return [message_record(r) for r in db.execute(sql, [*args, limit])]


def search_messages(db: Connection, user_id: str, query: str, limit: int, session_id: str | None) -> list[SearchHit]:
    words = terms(query)
    if session_id is not None:
        get_session(db, user_id, session_id)
    indexed = [w for w in words if len(w) >= FTS_MIN_CHARS]
    scanned = [w for w in words if len(w) < FTS_MIN_CHARS]
    where, args = ["m.user_id = ?"], [user_id]
    if session_id is not None:
        where.append("m.session_id = ?")
        args.append(session_id)
    for w in scanned:
        where.append("m.content LIKE ? ESCAPE '\\'")
        args.append(like_pattern(w))
    cols = f"{MESSAGE_COLS}, s.title"
    if indexed:
        sql = (f"SELECT {cols} FROM messages_fts f JOIN messages m ON m.pk = f.rowid "
               f"JOIN sessions s ON s.id = m.session_id WHERE messages_fts MATCH ? AND {' AND '.join(where)} "
               "ORDER BY f.rowid DESC LIMIT ?")  # newest first: FTS5 walks its doclist backwards and stops
        args = [" AND ".join(fts_phrase(w) for w in indexed), *args]
    else:  # only short terms (e.g. the two characters 北京): scan the caller's messages, newest first
        sql = (f"SELECT {cols} FROM messages m JOIN sessions s ON s.id = m.session_id "
               f"WHERE {' AND '.join(where)} ORDER BY m.pk DESC LIMIT ?")
    hits = []
    for row in db.execute(sql, [*args, limit]):
        msg = message_record(row[:-1])
        hits.append(SearchHit(msg, row[-1], snippet(msg.content, words)))
    return hits


# --- session locks --------------------------------------------------------------------------------

def _refuse_if_locked(db: Connection, session_id: str, lease: Lease | None) -> None:
    row = db.execute("SELECT owner, expires_at FROM session_locks WHERE session_id = ?", (session_id,)).fetchone()
    live = row is not None and row[1] > time.time()
    if lease is None:
        if live:
            raise SessionBusy(session_id)
        return
    if lease.session_id != session_id:
        raise InvalidInput(f"the lease passed is for session '{lease.session_id}', not '{session_id}'")
    if not live or row[0] != lease.owner:
        raise SessionBusy(session_id, "your lock expired while held; take it again before writing")


def acquire_lock(db: Connection, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
    get_session(db, user_id, session_id)
    now = time.time()
    db.execute("DELETE FROM session_locks WHERE session_id = ? AND expires_at <= ?", (session_id, now))
    cur = db.execute("INSERT OR IGNORE INTO session_locks (session_id, owner, expires_at) VALUES (?, ?, ?)",
                     (session_id, owner, now + ttl))
    return cur.rowcount == 1


def renew_lock(db: Connection, session_id: str, owner: str, ttl: float) -> bool:
    now = time.time()
    cur = db.execute("UPDATE session_locks SET expires_at = ? WHERE session_id = ? AND owner = ? AND expires_at > ?",
                     (now + ttl, session_id, owner, now))
    return cur.rowcount == 1


def release_lock(db: Connection, session_id: str, owner: str) -> None:
    db.execute("DELETE FROM session_locks WHERE session_id = ? AND owner = ?", (session_id, owner))
