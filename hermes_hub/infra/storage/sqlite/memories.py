"""SQL for long-term memories, their history, and lexical search over memories and messages.

Every statement that reads a user's rows filters by ``user_id``. Plain functions of a connection, run
by ``SQLiteStore`` like the session SQL; the indexes they read are written by ``indexing`` and ``vectors``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.records import MemoryEvent, MemoryRecord, RankedRow
from hermes_hub.infra.storage.sqlite import provenance
from hermes_hub.infra.storage.rows import MEMORY_COLS, dt, dumps, memory_not_found, memory_record, ts
from hermes_hub.infra.storage.terms import index_text

Connection = Any


# --- memories -------------------------------------------------------------------------------------

def find_duplicate(db: Connection, user_id: str, key: str) -> str | None:
    """The id of the user's live (active, not superseded) memory whose normalised text is ``key``."""
    row = db.execute("SELECT id FROM memories WHERE user_id = ? AND text_key = ? AND state = 'active' AND "
                     "superseded_by IS NULL ORDER BY pk DESC LIMIT 1", (user_id, key)).fetchone()
    return row[0] if row else None


def insert_memory(db: Connection, rec: MemoryRecord, key: str, event: MemoryEvent, supersedes: str | None) -> None:
    """Insert ``rec`` with its terms and first history event; mark ``supersedes`` (the caller's) replaced."""
    if supersedes is not None:
        row = db.execute("SELECT superseded_by FROM memories WHERE user_id = ? AND id = ?",
                         (rec.user_id, supersedes)).fetchone()
        if row is None:
            raise memory_not_found(supersedes)
        if row[0] is not None:
            raise InvalidInput(f"memory '{supersedes}' was already superseded by '{row[0]}'; supersede that one "
                               f"instead")
    cur = db.execute(
        f"INSERT INTO memories (text_key, {MEMORY_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key, rec.id, rec.user_id, rec.text, rec.kind, rec.confidence, dumps(rec.source), ts(rec.created_at),
         None if rec.event_time is None else ts(rec.event_time), None, 0, None, None, rec.state,
         ",".join(rec.flags)))
    db.execute("INSERT INTO memory_terms (rowid, terms) VALUES (?, ?)", (cur.lastrowid, index_text(rec.text)))
    provenance.link(db, rec.user_id, cur.lastrowid, _source_ids(rec))
    add_event(db, event)
    if supersedes is not None:
        db.execute("UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE user_id = ? AND id = ?",
                   (rec.id, ts(rec.created_at), rec.user_id, supersedes))
        add_event(db, MemoryEvent(supersedes, rec.user_id, rec.created_at, "superseded", event.actor,
                                  event.reason, {"superseded_by": rec.id}))


def _source_ids(rec: MemoryRecord) -> list[str]:
    ids = rec.source.get("message_ids") if isinstance(rec.source, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def get_memory(db: Connection, user_id: str, memory_id: str) -> MemoryRecord:
    row = db.execute(f"SELECT {MEMORY_COLS} FROM memories WHERE user_id = ? AND id = ?", (user_id, memory_id)).fetchone()
    if row is None:
        raise memory_not_found(memory_id)
    return memory_record(row)


def memories_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
    if not pks:
        return {}
    marks = ",".join("?" * len(pks))
    # ``+user_id``: look the rows up by primary key, then check the owner (the user index would scan them all)
    rows = db.execute(f"SELECT pk, {MEMORY_COLS} FROM memories WHERE pk IN ({marks}) AND +user_id = ?", (*pks, user_id))
    return {row[0]: memory_record(row[1:]) for row in rows}


def list_memories(db: Connection, user_id: str, state: str | None, kind: str | None, limit: int,
                  before_pk: int | None, include_superseded: bool) -> list[tuple[int, MemoryRecord]]:
    """Newest first, keyset-paginated by ``pk``."""
    where, args = ["user_id = ?"], [user_id]
    for col, value in (("state", state), ("kind", kind)):
        if value is not None:
            where.append(f"{col} = ?")
            args.append(value)
    if not include_superseded:
        where.append("superseded_by IS NULL")
    if before_pk is not None:
        where.append("pk < ?")
        args.append(before_pk)
    rows = db.execute(f"SELECT pk, {MEMORY_COLS} FROM memories WHERE {' AND '.join(where)} ORDER BY pk DESC LIMIT ?",
                      (*args, limit))
    return [(row[0], memory_record(row[1:])) for row in rows]


def set_state(db: Connection, user_id: str, memory_id: str, state: str, event: MemoryEvent) -> MemoryRecord:
    get_memory(db, user_id, memory_id)
    db.execute("UPDATE memories SET state = ? WHERE user_id = ? AND id = ?", (state, user_id, memory_id))
    add_event(db, event)
    return get_memory(db, user_id, memory_id)


def archive_idle(db: Connection, before: float, at: float) -> int:
    """Archive every active memory neither recalled nor created since ``before``; return how many."""
    rows = db.execute("SELECT id, user_id FROM memories WHERE state = 'active' AND "
                      "COALESCE(last_recalled_at, created_at) < ?", (before,)).fetchall()
    for mid, uid in rows:
        db.execute("UPDATE memories SET state = 'archived' WHERE id = ?", (mid,))
        add_event(db, MemoryEvent(mid, uid, dt(at), "archived", "archiver", "not recalled for a long time"))
    return len(rows)


def delete_memories(db: Connection, user_id: str, memory_id: str | None) -> int:
    """Forget one memory (``memory_id``) or all of the user's: row, terms, vectors and history."""
    if memory_id is not None:
        rows = db.execute("SELECT pk, id FROM memories WHERE user_id = ? AND id = ?", (user_id, memory_id)).fetchall()
        if not rows:
            raise memory_not_found(memory_id)
    else:
        rows = db.execute("SELECT pk, id FROM memories WHERE user_id = ?", (user_id,)).fetchall()
    tables = [name for (name,) in db.execute("SELECT name FROM vector_tables WHERE source = 'memories'")]
    for pk, mid in rows:
        db.execute("DELETE FROM memory_terms WHERE rowid = ?", (pk,))
        for table in tables:
            db.execute(f"DELETE FROM {table} WHERE rowid = ?", (pk,))
        db.execute("DELETE FROM memory_events WHERE memory_id = ? AND user_id = ?", (mid, user_id))
        db.execute("DELETE FROM memories WHERE pk = ?", (pk,))
    # a memory that pointed at a forgotten one no longer names it
    ids = [mid for _, mid in rows]
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        db.execute(f"UPDATE memories SET superseded_by = NULL, superseded_at = NULL WHERE user_id = ? AND "
                   f"superseded_by IN ({','.join('?' * len(chunk))})", (user_id, *chunk))
    return len(rows)


def touch(db: Connection, user_id: str, memory_ids: Sequence[str], at: float) -> None:
    """Recall bookkeeping: when each memory was last returned, and how often."""
    for mid in memory_ids:
        db.execute("UPDATE memories SET last_recalled_at = ?, recall_count = recall_count + 1 "
                   "WHERE user_id = ? AND id = ?", (at, user_id, mid))


def count_memories(db: Connection, user_id: str | None) -> dict[str, int]:
    if user_id is None:
        return {state: n for state, n in db.execute("SELECT state, COUNT(*) FROM memories GROUP BY state")}
    return {state: n for state, n in db.execute("SELECT state, COUNT(*) FROM memories WHERE user_id = ? "
                                                "GROUP BY state", (user_id,))}


# --- history --------------------------------------------------------------------------------------

def add_event(db: Connection, e: MemoryEvent) -> None:
    db.execute("INSERT INTO memory_events (memory_id, user_id, at, action, actor, reason, detail) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)", (e.memory_id, e.user_id, ts(e.at), e.action, e.actor, e.reason,
                                                dumps(e.detail)))


def list_events(db: Connection, user_id: str, memory_id: str) -> list[MemoryEvent]:
    get_memory(db, user_id, memory_id)
    rows = db.execute("SELECT memory_id, user_id, at, action, actor, reason, detail FROM memory_events "
                      "WHERE user_id = ? AND memory_id = ? ORDER BY id", (user_id, memory_id))
    return [MemoryEvent(m, u, dt(at), a, who, r, json.loads(d)) for m, u, at, a, who, r, d in rows]


# --- lexical search -------------------------------------------------------------------------------

def lexical_memories(db: Connection, user_id: str, match: str, limit: int) -> list[RankedRow]:
    return _lexical(db, "memories", "memory_terms", "bm25(memory_terms)", user_id, match, limit)


CONTEXT_WEIGHT = 0.3  # of the previous message's terms, against 1.0 for the message's own


def lexical_messages(db: Connection, user_id: str, match: str, limit: int) -> list[RankedRow]:
    return _lexical(db, "messages", "message_terms", f"bm25(message_terms, 1.0, {CONTEXT_WEIGHT})", user_id, match,
                    limit)


def lexical(db: Connection, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
    fn = lexical_memories if source == "memories" else lexical_messages
    return fn(db, user_id, match, limit)


LEXICAL_WINDOW = 2  # x limit: the best matches of every user looked at before the owner check


def _lexical(db: Connection, rows: str, terms: str, score: str, user_id: str, match: str,
             limit: int) -> list[RankedRow]:
    """The user's ``limit`` best BM25 matches. Checking the owner of every match reads each matching row
    (1.1 of 1.5 ms at 100k memories), so the owner is checked only on the best ``LEXICAL_WINDOW x limit``
    matches of all users; when those hold fewer than ``limit`` of the user's while more matches exist,
    every match is checked. Same rows either way: a user's match outside the window ranks below it."""
    window = limit * LEXICAL_WINDOW
    found = db.execute(f"SELECT t.pk, t.score FROM (SELECT rowid AS pk, {score} AS score FROM {terms} "
                       f"WHERE {terms} MATCH ? ORDER BY score LIMIT ?) t JOIN {rows} m ON m.pk = t.pk "
                       f"WHERE +m.user_id = ? ORDER BY t.score LIMIT ?", (match, window, user_id, limit)).fetchall()
    if len(found) < limit and db.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {terms} WHERE {terms} MATCH ? "
                                         f"LIMIT ?)", (match, window + 1)).fetchone()[0] > window:
        found = db.execute(f"SELECT t.rowid, {score} AS score FROM {terms} t JOIN {rows} m ON m.pk = t.rowid "
                           f"WHERE {terms} MATCH ? AND m.user_id = ? ORDER BY score LIMIT ?",
                           (match, user_id, limit)).fetchall()
    return [RankedRow(pk, score) for pk, score in found]


def messages_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """(id, session_id, role, content, created_at, session title) of each of the user's messages."""
    if not pks:
        return {}
    marks = ",".join("?" * len(pks))
    rows = db.execute(f"SELECT m.pk, m.id, m.session_id, m.role, m.content, m.created_at, s.title FROM messages m "
                      f"JOIN sessions s ON s.id = m.session_id WHERE m.pk IN ({marks}) AND +m.user_id = ?",
                      (*pks, user_id))
    return {row[0]: (row[1], row[2], row[3], row[4], dt(row[5]), row[6]) for row in rows}
