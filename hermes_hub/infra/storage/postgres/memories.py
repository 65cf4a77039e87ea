"""PostgreSQL SQL for memories, their history, and lexical search (tsvector) over memories and messages.

Lexical recall: the indexer stores words and CJK bigrams (``storage.terms``) as text, and a
``tsvector`` of them under the ``english`` configuration (stemmed like SQLite's porter tokenizer);
a recall question's terms are OR-ed into a ``tsquery`` and ranked by ``ts_rank`` (negated: lower is
better, as with SQLite's BM25). Vectors: ``vectors``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.records import MemoryEvent, MemoryRecord, RankedRow
from hermes_hub.infra.storage.postgres import provenance
from hermes_hub.infra.storage.rows import MEMORY_COLS, dt, dumps, memory_not_found, memory_record, ts
from hermes_hub.infra.storage.terms import index_text

Connection = Any
MEMORY_LOCK = 0x6D656D73  # "mems": memory keys become visible in key order (see sessions.APPEND_LOCK)
CONTEXT_WEIGHT = 0.3  # of the previous message's terms, against 1.0 for the message's own
_PHRASE_RE = re.compile(r'"((?:[^"]|"")*)"')


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
            raise memory_not_found(supersedes)
        if row[0] is not None:
            raise InvalidInput(f"memory '{supersedes}' was already superseded by '{row[0]}'; supersede that one "
                               f"instead")
    pk = await db.fetchval(
        f"INSERT INTO memories (text_key, {MEMORY_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
        f"$14, $15) RETURNING pk",
        key, rec.id, rec.user_id, rec.text, rec.kind, rec.confidence, dumps(rec.source), ts(rec.created_at),
        None if rec.event_time is None else ts(rec.event_time), None, 0, None, None, rec.state, ",".join(rec.flags))
    terms = index_text(rec.text)
    await db.execute("INSERT INTO memory_terms (pk, user_id, terms, doc) VALUES ($1, $2, $3, to_tsvector('english', $3))",
                     pk, rec.user_id, terms)
    ids = rec.source.get("message_ids") if isinstance(rec.source, dict) else None
    await provenance.link(db, rec.user_id, pk, [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else [])
    await add_event(db, event)
    if supersedes is not None:
        await db.execute("UPDATE memories SET superseded_by = $1, superseded_at = $2 WHERE user_id = $3 AND id = $4",
                         rec.id, ts(rec.created_at), rec.user_id, supersedes)
        await add_event(db, MemoryEvent(supersedes, rec.user_id, rec.created_at, "superseded", event.actor,
                                        event.reason, {"superseded_by": rec.id}))


async def get_memory(db: Connection, user_id: str, memory_id: str) -> MemoryRecord:
    row = await db.fetchrow(f"SELECT {MEMORY_COLS} FROM memories WHERE user_id = $1 AND id = $2", user_id, memory_id)
    if row is None:
        raise memory_not_found(memory_id)
    return memory_record(tuple(row))


async def memories_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
    if not pks:
        return {}
    rows = await db.fetch(f"SELECT pk, {MEMORY_COLS} FROM memories WHERE pk = ANY($1::bigint[]) AND user_id = $2",
                          list(pks), user_id)
    return {row[0]: memory_record(tuple(row)[1:]) for row in rows}


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
    rows = await db.fetch(f"SELECT pk, {MEMORY_COLS} FROM memories WHERE {' AND '.join(where)} ORDER BY pk DESC "
                          f"LIMIT ${len(args)}", *args)
    return [(row[0], memory_record(tuple(row)[1:])) for row in rows]


async def set_state(db: Connection, user_id: str, memory_id: str, state: str, event: MemoryEvent) -> MemoryRecord:
    row = await db.fetchrow(f"UPDATE memories SET state = $1 WHERE user_id = $2 AND id = $3 RETURNING {MEMORY_COLS}",
                            state, user_id, memory_id)
    if row is None:
        raise memory_not_found(memory_id)
    await add_event(db, event)
    return memory_record(tuple(row))


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
            raise memory_not_found(memory_id)
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
                     e.reason, dumps(e.detail))


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
