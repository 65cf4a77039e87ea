"""SQL for long-term memories, their history, the lexical and vector indexes, and index marks.

Every statement that reads a user's rows filters by ``user_id``; vector tables are partitioned by it,
so a KNN search only ever scans the caller's own vectors. Plain functions of a connection, run by
``SQLiteStore`` like the session SQL.
"""

from __future__ import annotations

import json
import re
import struct
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.errors import InvalidInput, NotFound
from hermes_hub.storage.records import MemoryEvent, MemoryRecord, RankedRow
from hermes_hub.storage.sqlite_sessions import dt, ts
from hermes_hub.storage.terms import index_text

Connection = Any
NOT_FOUND_HINT = "list your memories to see their ids"
_COLS = ("id, user_id, text, kind, confidence, source, created_at, event_time, last_recalled_at, recall_count, "
         "superseded_by, superseded_at, state, flags")
_NAME_RE = re.compile(r"^[a-z0-9_]+$")


_EXPLICIT = '{"type":"explicit"}'  # the commonest source, as ``_dumps`` writes it


def _memory(row: tuple[Any, ...]) -> MemoryRecord:
    """A row as a record (recall builds one per candidate: kept cheap, a third of a load at 100k)."""
    (mid, uid, text, kind, conf, source, created, event, recalled, count, sup_by, sup_at, state, flags) = row
    return MemoryRecord(mid, uid, text, kind, conf, {"type": "explicit"} if source == _EXPLICIT else json.loads(source),
                        dt(created), None if event is None else dt(event), None if recalled is None else dt(recalled),
                        count, sup_by, None if sup_at is None else dt(sup_at), state,
                        tuple(f for f in flags.split(",") if f) if flags else ())


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def not_found(memory_id: str) -> NotFound:
    return NotFound("memory", memory_id, NOT_FOUND_HINT)


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
            raise not_found(supersedes)
        if row[0] is not None:
            raise InvalidInput(f"memory '{supersedes}' was already superseded by '{row[0]}'; supersede that one "
                               f"instead")
    cur = db.execute(
        f"INSERT INTO memories (text_key, {_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key, rec.id, rec.user_id, rec.text, rec.kind, rec.confidence, _dumps(rec.source), ts(rec.created_at),
         None if rec.event_time is None else ts(rec.event_time), None, 0, None, None, rec.state,
         ",".join(rec.flags)))
    db.execute("INSERT INTO memory_terms (rowid, terms) VALUES (?, ?)", (cur.lastrowid, index_text(rec.text)))
    add_event(db, event)
    if supersedes is not None:
        db.execute("UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE user_id = ? AND id = ?",
                   (rec.id, ts(rec.created_at), rec.user_id, supersedes))
        add_event(db, MemoryEvent(supersedes, rec.user_id, rec.created_at, "superseded", event.actor,
                                  event.reason, {"superseded_by": rec.id}))


def get_memory(db: Connection, user_id: str, memory_id: str) -> MemoryRecord:
    row = db.execute(f"SELECT {_COLS} FROM memories WHERE user_id = ? AND id = ?", (user_id, memory_id)).fetchone()
    if row is None:
        raise not_found(memory_id)
    return _memory(row)


def memories_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
    if not pks:
        return {}
    marks = ",".join("?" * len(pks))
    # ``+user_id``: look the rows up by primary key, then check the owner (the user index would scan them all)
    rows = db.execute(f"SELECT pk, {_COLS} FROM memories WHERE pk IN ({marks}) AND +user_id = ?", (*pks, user_id))
    return {row[0]: _memory(row[1:]) for row in rows}


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
    rows = db.execute(f"SELECT pk, {_COLS} FROM memories WHERE {' AND '.join(where)} ORDER BY pk DESC LIMIT ?",
                      (*args, limit))
    return [(row[0], _memory(row[1:])) for row in rows]


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
            raise not_found(memory_id)
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
                                                _dumps(e.detail)))


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


# --- background indexing --------------------------------------------------------------------------

def mark(db: Connection, name: str) -> int:
    row = db.execute("SELECT last_pk FROM index_marks WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def set_mark(db: Connection, name: str, last_pk: int) -> None:
    db.execute("INSERT INTO index_marks (name, last_pk) VALUES (?, ?) "
               "ON CONFLICT (name) DO UPDATE SET last_pk = excluded.last_pk", (name, last_pk))


def pending(db: Connection, source: str, name: str) -> int:
    table = "memories" if source == "memories" else "messages"
    return db.execute(f"SELECT COUNT(*) FROM {table} WHERE pk > ?", (mark(db, name),)).fetchone()[0]


def unindexed(db: Connection, source: str, name: str, limit: int) -> list[tuple[int, str, str]]:
    """(pk, user_id, text) of the next rows past the mark ``name``."""
    table, col = ("memories", "text") if source == "memories" else ("messages", "content")
    return db.execute(f"SELECT pk, user_id, {col} FROM {table} WHERE pk > ? ORDER BY pk LIMIT ?",
                      (mark(db, name), limit)).fetchall()


def unindexed_messages(db: Connection, name: str, limit: int) -> list[tuple[int, str, str, str]]:
    """(pk, user_id, content, previous message's content) of the next messages past the mark ``name``."""
    return db.execute("SELECT m.pk, m.user_id, m.content, COALESCE(p.content, '') FROM messages m "
                      "LEFT JOIN messages p ON p.session_id = m.session_id AND p.seq = m.seq - 1 "
                      "WHERE m.pk > ? ORDER BY m.pk LIMIT ?", (mark(db, name), limit)).fetchall()


def index_message_terms(db: Connection, rows: Sequence[tuple[int, str, str]], name: str, last_pk: int) -> None:
    """``(pk, terms, context terms)`` rows, and the mark moved past them."""
    for pk, terms, context in rows:
        db.execute("INSERT OR REPLACE INTO message_terms (rowid, terms, context) VALUES (?, ?, ?)",
                   (pk, terms, context))
    set_mark(db, name, last_pk)


# --- vectors --------------------------------------------------------------------------------------

def vector_table(source: str, embedder: str, dims: int) -> str:
    tag = re.sub(r"[^a-z0-9]+", "_", embedder.lower()).strip("_")
    name = f"vec_{source}_{tag}_{dims}"
    if not _NAME_RE.match(name):
        raise ValueError(f"bad vector table name {name!r}")
    return name


def ensure_vector_table(db: Connection, source: str, embedder: str, dims: int) -> str:
    """The vector table of ``source`` for this embedder, created on first use."""
    name = vector_table(source, embedder, dims)
    if db.execute("SELECT 1 FROM vector_tables WHERE name = ?", (name,)).fetchone():
        return name
    db.execute(f"CREATE VIRTUAL TABLE {name} USING vec0 (user_id text partition key, "
               f"embedding float[{dims}] distance_metric=cosine)")
    if source == "messages":  # a deleted message takes its vector with it
        db.execute(f"CREATE TRIGGER {name}_delete AFTER DELETE ON messages BEGIN "
                   f"DELETE FROM {name} WHERE rowid = old.pk; END")
    db.execute("INSERT INTO vector_tables (name, source, embedder, dims, created_at) VALUES (?, ?, ?, ?, ?)",
               (name, source, embedder, dims, time.time()))
    return name


def pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"{len(vector)}f", *vector)


def add_vectors(db: Connection, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], name: str,
                last_pk: int) -> None:
    """Insert ``(pk, user_id, vector)`` rows and move the mark, in one transaction."""
    for pk, user_id, vector in rows:
        db.execute(f"DELETE FROM {table} WHERE rowid = ?", (pk,))
        db.execute(f"INSERT INTO {table} (rowid, user_id, embedding) VALUES (?, ?, ?)", (pk, user_id, pack(vector)))
    set_mark(db, name, last_pk)


def nearest(db: Connection, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
    rows = db.execute(f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ? AND user_id = ? "
                      f"ORDER BY distance", (pack(vector), k, user_id))
    return [RankedRow(pk, distance) for pk, distance in rows]


def reset_message_terms(db: Connection, name: str) -> None:
    """Empty the messages' text index and its mark, so the indexer rebuilds it."""
    db.execute("DELETE FROM message_terms")
    db.execute("DELETE FROM index_marks WHERE name = ?", (name,))


def vectors_between(db: Connection, table: str, user_id: str, after_pk: int, upto_pk: int) -> list[tuple[int, bytes]]:
    """(pk, float32 bytes) of one user's vectors with ``after_pk < pk <= upto_pk``: a scan of the
    user's partition the first time (``after_pk`` 0), point lookups of the user's new rows after."""
    if after_pk == 0:
        return db.execute(f"SELECT rowid, embedding FROM {table} WHERE user_id = ? AND rowid <= ?",
                          (user_id, upto_pk)).fetchall()
    source = db.execute("SELECT source FROM vector_tables WHERE name = ?", (table,)).fetchone()
    if source is None:
        return []
    pks = [pk for (pk,) in db.execute(f"SELECT pk FROM {source[0]} WHERE user_id = ? AND pk > ? AND pk <= ?",
                                      (user_id, after_pk, upto_pk))]
    out = []
    for pk in pks:
        row = db.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid = ?", (pk,)).fetchone()
        if row is not None:
            out.append(row)
    return out


def drop_vector_tables(db: Connection, embedder: str | None = None) -> list[str]:
    """Drop the vector tables (of one embedder, or all) and their marks, for a reindex."""
    names = [n for (n, e) in db.execute("SELECT name, embedder FROM vector_tables") if embedder in (None, e)]
    for name in names:
        db.execute(f"DROP TRIGGER IF EXISTS {name}_delete")
        db.execute(f"DROP TABLE IF EXISTS {name}")
        db.execute("DELETE FROM vector_tables WHERE name = ?", (name,))
        db.execute("DELETE FROM index_marks WHERE name = ?", (name,))
    return names
