"""PostgreSQL SQL for memories, their history, the lexical (tsvector) and vector (pgvector) indexes.

Lexical recall: the indexer stores words and CJK bigrams (``storage.terms``) as text, and a
``tsvector`` of them under the ``english`` configuration (stemmed like SQLite's porter tokenizer);
a recall question's terms are OR-ed into a ``tsquery`` and ranked by ``ts_rank`` (negated: lower is
better, as with SQLite's BM25). Vectors: one table per embedder with an HNSW index (cosine), every
search filtered by the user (pgvector's iterative scan keeps filling the ``k`` from the user's rows).
"""

from __future__ import annotations

import json
import re
import struct
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.errors import InvalidInput
from hermes_hub.storage import postgres_indexing as claims
from hermes_hub.storage.records import MemoryEvent, MemoryRecord, RankedRow
from hermes_hub.storage.sqlite_memory import _COLS, _dumps, _memory, not_found, vector_table
from hermes_hub.storage.sqlite_sessions import dt, ts
from hermes_hub.storage.terms import index_text

Connection = Any
MEMORY_LOCK = 0x6D656D73  # "mems": memory keys become visible in key order (see postgres_sessions.APPEND_LOCK)
CONTEXT_WEIGHT = 0.3  # of the previous message's terms, against 1.0 for the message's own
EF_SEARCH = 100  # candidates HNSW keeps per search (pgvector's default 40 loses recall at k=20)
HNSW_MAX_DIMS = 2000  # pgvector's limit for an HNSW index on ``vector``; wider tables are scanned exactly
_PHRASE_RE = re.compile(r'"((?:[^"]|"")*)"')
MESSAGE_DOC = "setweight(to_tsvector('english', $3), 'A') || setweight(to_tsvector('english', $4), 'D')"


# --- memories -------------------------------------------------------------------------------------

async def find_duplicate(db: Connection, user_id: str, key: str) -> str | None:
    return await db.fetchval("SELECT id FROM memories WHERE user_id = $1 AND text_key = $2 AND state = 'active' AND "
                             "superseded_by IS NULL ORDER BY pk DESC LIMIT 1", user_id, key)


async def insert_memory(db: Connection, rec: MemoryRecord, key: str, event: MemoryEvent, supersedes: str | None) -> None:
    await db.execute("SELECT pg_advisory_xact_lock($1)", MEMORY_LOCK)
    if supersedes is not None:
        row = await db.fetchrow("SELECT superseded_by FROM memories WHERE user_id = $1 AND id = $2 FOR UPDATE",
                                rec.user_id, supersedes)
        if row is None:
            raise not_found(supersedes)
        if row[0] is not None:
            raise InvalidInput(f"memory '{supersedes}' was already superseded by '{row[0]}'; supersede that one "
                               f"instead")
    pk = await db.fetchval(
        f"INSERT INTO memories (text_key, {_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
        f"$14, $15) RETURNING pk",
        key, rec.id, rec.user_id, rec.text, rec.kind, rec.confidence, _dumps(rec.source), ts(rec.created_at),
        None if rec.event_time is None else ts(rec.event_time), None, 0, None, None, rec.state, ",".join(rec.flags))
    terms = index_text(rec.text)
    await db.execute("INSERT INTO memory_terms (pk, user_id, terms, doc) VALUES ($1, $2, $3, to_tsvector('english', $3))",
                     pk, rec.user_id, terms)
    await add_event(db, event)
    if supersedes is not None:
        await db.execute("UPDATE memories SET superseded_by = $1, superseded_at = $2 WHERE user_id = $3 AND id = $4",
                         rec.id, ts(rec.created_at), rec.user_id, supersedes)
        await add_event(db, MemoryEvent(supersedes, rec.user_id, rec.created_at, "superseded", event.actor,
                                        event.reason, {"superseded_by": rec.id}))


async def get_memory(db: Connection, user_id: str, memory_id: str) -> MemoryRecord:
    row = await db.fetchrow(f"SELECT {_COLS} FROM memories WHERE user_id = $1 AND id = $2", user_id, memory_id)
    if row is None:
        raise not_found(memory_id)
    return _memory(tuple(row))


async def memories_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
    if not pks:
        return {}
    rows = await db.fetch(f"SELECT pk, {_COLS} FROM memories WHERE pk = ANY($1::bigint[]) AND user_id = $2",
                          list(pks), user_id)
    return {row[0]: _memory(tuple(row)[1:]) for row in rows}


async def list_memories(db: Connection, user_id: str, state: str | None, kind: str | None, limit: int,
                        before_pk: int | None, include_superseded: bool) -> list[tuple[int, MemoryRecord]]:
    where, args = ["user_id = $1"], [user_id]
    for col, value in (("state", state), ("kind", kind), ("pk <", before_pk)):
        if value is not None:
            args.append(value)
            where.append(f"{col} {'' if '<' in col else '='} ${len(args)}")
    if not include_superseded:
        where.append("superseded_by IS NULL")
    args.append(limit)
    rows = await db.fetch(f"SELECT pk, {_COLS} FROM memories WHERE {' AND '.join(where)} ORDER BY pk DESC "
                          f"LIMIT ${len(args)}", *args)
    return [(row[0], _memory(tuple(row)[1:])) for row in rows]


async def set_state(db: Connection, user_id: str, memory_id: str, state: str, event: MemoryEvent) -> MemoryRecord:
    row = await db.fetchrow(f"UPDATE memories SET state = $1 WHERE user_id = $2 AND id = $3 RETURNING {_COLS}",
                            state, user_id, memory_id)
    if row is None:
        raise not_found(memory_id)
    await add_event(db, event)
    return _memory(tuple(row))


async def archive_idle(db: Connection, before: float, at: float) -> int:
    rows = await db.fetch("UPDATE memories SET state = 'archived' WHERE state = 'active' AND "
                          "COALESCE(last_recalled_at, created_at) < $1 RETURNING id, user_id", before)
    for mid, uid in rows:
        await add_event(db, MemoryEvent(mid, uid, dt(at), "archived", "archiver", "not recalled for a long time"))
    return len(rows)


async def delete_memories(db: Connection, user_id: str, memory_id: str | None) -> int:
    """Forget one memory or all of the user's; terms and vectors go with the row (foreign keys cascade)."""
    if memory_id is not None:
        ids = [r[0] for r in await db.fetch("DELETE FROM memories WHERE user_id = $1 AND id = $2 RETURNING id",
                                            user_id, memory_id)]
        if not ids:
            raise not_found(memory_id)
    else:
        ids = [r[0] for r in await db.fetch("DELETE FROM memories WHERE user_id = $1 RETURNING id", user_id)]
    await db.execute("DELETE FROM memory_events WHERE user_id = $1 AND memory_id = ANY($2::text[])", user_id, ids)
    await db.execute("UPDATE memories SET superseded_by = NULL, superseded_at = NULL WHERE user_id = $1 AND "
                     "superseded_by = ANY($2::text[])", user_id, ids)
    return len(ids)


async def touch(db: Connection, user_id: str, memory_ids: Sequence[str], at: float) -> None:
    for mid in memory_ids:
        await db.execute("UPDATE memories SET last_recalled_at = $1, recall_count = recall_count + 1 "
                         "WHERE user_id = $2 AND id = $3", at, user_id, mid)


async def count_memories(db: Connection, user_id: str | None) -> dict[str, int]:
    if user_id is None:
        return {state: n for state, n in await db.fetch("SELECT state, COUNT(*) FROM memories GROUP BY state")}
    return {state: n for state, n in await db.fetch("SELECT state, COUNT(*) FROM memories WHERE user_id = $1 "
                                                    "GROUP BY state", user_id)}


async def add_event(db: Connection, e: MemoryEvent) -> None:
    await db.execute("INSERT INTO memory_events (memory_id, user_id, at, action, actor, reason, detail) "
                     "VALUES ($1, $2, $3, $4, $5, $6, $7)", e.memory_id, e.user_id, ts(e.at), e.action, e.actor,
                     e.reason, _dumps(e.detail))


async def list_events(db: Connection, user_id: str, memory_id: str) -> list[MemoryEvent]:
    await get_memory(db, user_id, memory_id)
    rows = await db.fetch("SELECT memory_id, user_id, at, action, actor, reason, detail FROM memory_events "
                          "WHERE user_id = $1 AND memory_id = $2 ORDER BY id", user_id, memory_id)
    return [MemoryEvent(m, u, dt(at), a, who, r, json.loads(d)) for m, u, at, a, who, r, d in rows]


# --- lexical search -------------------------------------------------------------------------------

def tsquery(match: str) -> str | None:
    """The quoted terms of an FTS5 ``"a" OR "b"`` expression as a ``to_tsquery`` OR of lexemes."""
    words = [w.replace('""', '"') for w in _PHRASE_RE.findall(match)] or match.split()
    lexemes = ["'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words if w.strip()]
    return " | ".join(lexemes) or None


async def lexical(db: Connection, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
    query = tsquery(match)
    if query is None:
        return []
    weights = f"'{{{CONTEXT_WEIGHT}, 0, 0, 1}}'" if source == "messages" else "'{0.1, 0.2, 0.4, 1}'"
    table = "message_terms" if source == "messages" else "memory_terms"
    rows = await db.fetch(f"SELECT t.pk, -ts_rank({weights}, t.doc, q, 1) AS score FROM {table} t, "
                          f"to_tsquery('english', $1) q WHERE t.doc @@ q AND t.user_id = $2 ORDER BY score, t.pk "
                          f"LIMIT $3", query, user_id, limit)
    return [RankedRow(pk, score) for pk, score in rows]


async def messages_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    if not pks:
        return {}
    rows = await db.fetch("SELECT m.pk, m.id, m.session_id, m.role, m.content, m.created_at, s.title FROM messages m "
                          "JOIN sessions s ON s.id = m.session_id WHERE m.pk = ANY($1::bigint[]) AND m.user_id = $2",
                          list(pks), user_id)
    return {row[0]: (row[1], row[2], row[3], row[4], dt(row[5]), row[6]) for row in rows}


# --- background indexing --------------------------------------------------------------------------

async def mark(db: Connection, name: str) -> int:
    return int(await db.fetchval("SELECT last_pk FROM index_marks WHERE name = $1", name) or 0)


async def set_mark(db: Connection, name: str, last_pk: int) -> None:
    await db.execute("INSERT INTO index_marks (name, last_pk) VALUES ($1, $2) "
                     "ON CONFLICT (name) DO UPDATE SET last_pk = greatest(index_marks.last_pk, excluded.last_pk)",
                     name, last_pk)


async def pending(db: Connection, source: str, name: str) -> int:
    table = "memories" if source == "memories" else "messages"
    return int(await db.fetchval(f"SELECT COUNT(*) FROM {table} WHERE pk > $1", await mark(db, name)))


async def unindexed(db: Connection, source: str, name: str, limit: int) -> list[tuple[int, str, str]]:
    return await rows_between(db, source, await mark(db, name), None, limit)


async def rows_between(db: Connection, source: str, after: int, last: int | None,
                       limit: int | None) -> list[tuple[int, str, str]]:
    """(pk, user_id, text) of the rows in ``(after, last]`` (no upper end when None), oldest first."""
    table, col = ("memories", "text") if source == "memories" else ("messages", "content")
    rows = await db.fetch(f"SELECT pk, user_id, {col} FROM {table} WHERE pk > $1 AND ($2::bigint IS NULL OR "
                          f"pk <= $2) ORDER BY pk LIMIT $3", after, last, limit)
    return [tuple(r) for r in rows]


async def unindexed_messages(db: Connection, name: str, limit: int) -> list[tuple[int, str, str, str]]:
    return await messages_between(db, await mark(db, name), None, limit)


async def messages_between(db: Connection, after: int, last: int | None,
                           limit: int | None) -> list[tuple[int, str, str, str]]:
    """(pk, user_id, content, the previous message's content) in ``(after, last]``, oldest first."""
    rows = await db.fetch("SELECT m.pk, m.user_id, m.content, COALESCE(p.content, '') FROM messages m "
                          "LEFT JOIN messages p ON p.session_id = m.session_id AND p.seq = m.seq - 1 "
                          "WHERE m.pk > $1 AND ($2::bigint IS NULL OR m.pk <= $2) ORDER BY m.pk LIMIT $3",
                          after, last, limit)
    return [tuple(r) for r in rows]


async def claim_rows(db: Connection, source: str, name: str, owner: str, lease: float,
                     limit: int) -> list[tuple[int, str, str]]:
    async def fetch(conn: Connection, after: int, last: int | None, n: int | None) -> list[tuple[Any, ...]]:
        return await rows_between(conn, source, after, last, n)
    return await claims.claim(db, name, owner, lease, limit, fetch)  # type: ignore[return-value]


async def claim_messages(db: Connection, name: str, owner: str, lease: float,
                         limit: int) -> list[tuple[int, str, str, str]]:
    return await claims.claim(db, name, owner, lease, limit, messages_between)  # type: ignore[return-value]


async def _finish(db: Connection, name: str, last_pk: int, owner: str | None) -> bool:
    """Move the mark past a batch (its claim done, when claimed); False: the claim is another's now."""
    if owner is not None:
        return await claims.finish(db, name, owner, last_pk)
    await set_mark(db, name, last_pk)
    return True


async def index_message_terms(db: Connection, rows: Sequence[tuple[int, str, str]], name: str, last_pk: int,
                              owner: str | None) -> bool:
    if not await _finish(db, name, last_pk, owner):
        return False
    await db.executemany(
        f"INSERT INTO message_terms (pk, user_id, terms, context, doc) SELECT $1, user_id, $3, $4, {MESSAGE_DOC} "
        f"FROM messages WHERE pk = $2 ON CONFLICT (pk) DO UPDATE SET terms = excluded.terms, "
        f"context = excluded.context, doc = excluded.doc", [(pk, pk, t, c) for pk, t, c in rows])
    return True


async def reset_message_terms(db: Connection, name: str) -> None:
    await db.execute("DELETE FROM message_terms")
    await db.execute("DELETE FROM index_marks WHERE name = $1", name)
    await claims.forget(db, name)


# --- vectors --------------------------------------------------------------------------------------

async def ensure_vector_table(db: Connection, source: str, embedder: str, dims: int) -> str:
    name = vector_table(source, embedder, dims)
    await db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", name)  # two replicas may ask at once
    if await db.fetchval("SELECT 1 FROM vector_tables WHERE name = $1", name):
        return name
    table = "memories" if source == "memories" else "messages"
    await db.execute(f"CREATE TABLE {name} (pk bigint PRIMARY KEY REFERENCES {table} (pk) ON DELETE CASCADE, "
                     f"user_id text NOT NULL, embedding vector({dims}) NOT NULL)")
    await db.execute(f"CREATE INDEX {name}_user ON {name} (user_id, pk)")
    if dims <= HNSW_MAX_DIMS:
        await db.execute(f"CREATE INDEX {name}_hnsw ON {name} USING hnsw (embedding vector_cosine_ops)")
    await db.execute("INSERT INTO vector_tables (name, source, embedder, dims, created_at) VALUES ($1, $2, $3, $4, $5)",
                     name, source, embedder, dims, time.time())
    return name


async def add_vectors(db: Connection, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], name: str,
                      last_pk: int, owner: str | None) -> bool:
    if not await _finish(db, name, last_pk, owner):
        return False
    await db.executemany(f"INSERT INTO {table} (pk, user_id, embedding) VALUES ($1, $2, $3::real[]::vector) "
                         f"ON CONFLICT (pk) DO UPDATE SET embedding = excluded.embedding",
                         [(pk, uid, [float(x) for x in vec]) for pk, uid, vec in rows])
    return True


async def nearest(db: Connection, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
    # strict_order: the HNSW scan goes on past ef_search until k of this user's rows are found
    await db.execute("SET LOCAL hnsw.iterative_scan = strict_order")
    await db.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, k)}")
    rows = await db.fetch(f"SELECT pk, embedding <=> $1::real[]::vector AS distance FROM {table} WHERE user_id = $2 "
                          f"ORDER BY embedding <=> $1::real[]::vector LIMIT $3", [float(x) for x in vector], user_id, k)
    return [RankedRow(pk, distance) for pk, distance in rows]


async def vectors_between(db: Connection, table: str, user_id: str, after_pk: int,
                          upto_pk: int) -> list[tuple[int, bytes]]:
    rows = await db.fetch(f"SELECT pk, embedding::real[] FROM {table} WHERE user_id = $1 AND pk > $2 AND pk <= $3 "
                          f"ORDER BY pk", user_id, after_pk, upto_pk)
    return [(pk, struct.pack(f"{len(v)}f", *v)) for pk, v in rows]


async def drop_vector_tables(db: Connection, embedder: str | None) -> list[str]:
    names = [n for n, e in await db.fetch("SELECT name, embedder FROM vector_tables") if embedder in (None, e)]
    for name in names:
        await db.execute(f"DROP TABLE IF EXISTS {name}")
        await db.execute("DELETE FROM vector_tables WHERE name = $1", name)
        await db.execute("DELETE FROM index_marks WHERE name = $1", name)
        await claims.forget(db, name)
    return names
