"""Copy a whole store to another, either way between SQLite and PostgreSQL (``hermes-hub storage migrate``).

Both schemas have the same tables and columns (times in epoch seconds, JSON as text), so rows move
as they are, keys included; only the indexes differ and are rebuilt by the target: the lexical terms
(FTS5 on SQLite, ``tsvector`` on PostgreSQL, for memories, messages and documents' chunks) and the
vector tables (sqlite-vec, pgvector). Each table
is copied in batches, and its row count is compared on both sides at the end.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_hub.infra.errors import StorageError
from hermes_hub.infra.storage.base import Store

BATCH = 2000
# (table, key, columns) in an order that satisfies the foreign keys
TABLES: list[tuple[str, str, tuple[str, ...]]] = [
    ("sessions", "id", ("id", "user_id", "title", "summary", "created_at", "updated_at", "message_count",
                        "summary_upto")),
    ("messages", "pk", ("pk", "id", "session_id", "user_id", "seq", "role", "content", "tool_calls", "tool_call_id",
                        "created_at", "metadata")),
    ("session_locks", "session_id", ("session_id", "owner", "expires_at")),
    ("api_tokens", "id", ("id", "token_hash", "user_id", "role", "name", "created_at", "revoked_at")),
    ("status_logins", "id_hash", ("id_hash", "token_hash", "user_id", "created_at", "seen_at")),
    ("sealed_secrets", "user_id, kind, name", ("user_id", "kind", "name", "key_id", "sealed", "updated_at")),
    ("oauth_clients", "client_id", ("client_id", "info", "created_at")),
    ("oauth_grants", "id", ("id", "user_id", "role", "client_id", "client_name", "resource", "scopes", "created_at",
                            "revoked_at")),
    ("oauth_tokens", "token_hash", ("token_hash", "kind", "grant_id", "client_id", "data", "created_at", "expires_at",
                                    "used_at")),
    ("tool_pins", "server, tool", ("server", "tool", "digest", "definition", "pinned_at", "pinned_by", "seen_digest",
                                   "seen_definition", "seen_at")),
    ("audit", "id", ("id", "at", "user_id", "session_id", "tool", "server", "arguments", "outcome", "error",
                     "duration_ms", "result_size", "run_id", "call_id")),
    ("memories", "pk", ("pk", "id", "user_id", "text", "text_key", "kind", "confidence", "source", "created_at",
                        "event_time", "last_recalled_at", "recall_count", "superseded_by", "superseded_at", "state",
                        "flags")),
    ("memory_events", "id", ("id", "memory_id", "user_id", "at", "action", "actor", "reason", "detail")),
    ("extraction_jobs", "id", ("id", "user_id", "session_id", "first_pk", "last_pk", "state", "attempts", "owner",
                               "claimed_until", "not_before", "created_at", "done_at", "result")),
    ("summary_jobs", "session_id", ("session_id", "user_id", "upto_seq", "claimed_upto", "state", "attempts",
                                    "owner", "claimed_until", "not_before", "created_at", "done_at", "error")),
    ("agent_runs", "run_id", ("run_id", "user_id", "session_id", "profile", "task", "started_at", "ended_at",
                              "stop_reason", "rounds", "input_tokens", "output_tokens", "answer", "trace", "rating",
                              "comment")),
    ("artifacts", "id", ("id", "user_id", "session_id", "run_id", "tool", "mime_type", "chars", "created_at",
                         "truncated", "text")),
    ("approvals", "id", ("id", "user_id", "role", "tool", "server", "digest", "preview", "state", "created_at",
                         "expires_at", "decided_by", "decided_via", "decided_at")),
    ("eval_cases", "id", ("id", "user_id", "run_id", "created_at", "body")),
    ("schedules", "id", ("id", "user_id", "role", "task", "kind", "spec", "timezone", "profile", "session_id",
                         "misfire_grace", "jitter", "retries", "notify", "state", "next_due", "created_at",
                         "updated_at")),
    ("schedule_runs", "id", ("id", "schedule_id", "user_id", "due_at", "fire_at", "state", "attempts", "owner",
                             "claimed_until", "finished_at", "run_id", "session_id", "answer", "stop_reason", "error",
                             "missed")),
    ("memory_sources", "memory_pk, message_pk", ("memory_pk", "message_pk", "user_id", "session_id")),
    ("working_memory", "session_id", ("session_id", "user_id", "text", "updated_at")),
    ("documents", "pk", ("pk", "id", "user_id", "shared", "title", "origin", "format", "chars", "chunks", "created_at",
                         "text")),
]
# doc_chunks: its word index is a column on PostgreSQL (``doc``) and a table on SQLite, so ``_copy_chunks``
CHUNK_COLUMNS = ("pk", "document_pk", "user_id", "shared", "position", "heading", "text", "embedder", "embedding")
IDENTITY = {"messages": "pk", "audit": "id", "memories": "pk", "memory_events": "id", "extraction_jobs": "id",
            "schedule_runs": "id", "documents": "pk", "doc_chunks": "pk"}
DATA_TABLES = ("sessions", "api_tokens", "audit", "memories", "extraction_jobs", "summary_jobs", "agent_runs",
               "schedules", "documents")


@dataclass
class Report:
    counts: list[tuple[str, int, int]] = field(default_factory=list)  # (table, in the source, in the target)

    @property
    def ok(self) -> bool:
        return all(a == b for _, a, b in self.counts)


class _Side:
    """Backend-specific reading and writing of one store (``raw`` SQL differs in placeholders)."""

    def __init__(self, store: Store) -> None:
        self.store: Any = store
        self.pg = type(store).__name__ == "PostgresStore"

    def marks(self, n: int, start: int = 1) -> str:
        return ", ".join(f"${i}" if self.pg else "?" for i in range(start, start + n))

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return await self.store.raw(sql)

    async def count(self, table: str) -> int:
        return int((await self.rows(f"SELECT COUNT(*) FROM {table}"))[0][0])

    async def batches(self, table: str, key: str, cols: str) -> Any:
        offset = 0
        while batch := await self.rows(f"SELECT {cols} FROM {table} ORDER BY {key} LIMIT {BATCH} OFFSET {offset}"):
            yield batch
            offset += len(batch)

    async def many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.pg:
            async def go(conn: Any) -> None:
                await conn.executemany(sql, rows)
            await self.store._run(go)
        else:
            await self.store._write(lambda db: db.executemany(sql, rows))

    async def statement(self, sql: str) -> None:
        if self.pg:
            async def go(conn: Any) -> None:
                await conn.execute(sql)
            await self.store._run(go)
        else:
            await self.store.raw(sql, write=True)


def _floats(blob_or_list: Any) -> list[float]:
    if isinstance(blob_or_list, bytes | bytearray | memoryview):
        data = bytes(blob_or_list)
        return list(struct.unpack(f"{len(data) // 4}f", data))
    return [float(x) for x in blob_or_list]


async def is_empty(store: Store) -> bool:
    side = _Side(store)
    return all([await side.count(t) == 0 for t in DATA_TABLES])


async def clear(store: Store) -> None:
    """Empty every table of ``store`` (``--force``) and drop its vector tables."""
    side = _Side(store)
    await store.drop_vector_tables()
    chunks = ("doc_chunks",) if side.pg else ("doc_chunk_terms", "doc_chunks")
    for table in ("memory_terms", "message_terms", "index_marks", *chunks, *reversed([t for t, _, _ in TABLES])):
        await side.statement(f"DELETE FROM {table}")
    if side.pg:  # batches claimed by replicas' indexers were ranges of the rows just deleted
        await side.statement("DELETE FROM index_claims")


async def copy_store(source: Store, target: Store, say: Callable[[str], None] = lambda _: None) -> Report:
    """Copy every row of ``source`` into the (empty) ``target``; return the per-table counts."""
    src, dst = _Side(source), _Side(target)
    report = Report()
    for table, key, columns in TABLES:
        cols = ", ".join(columns)
        insert = f"INSERT INTO {table} ({cols}) VALUES ({dst.marks(len(columns))})"
        for batch in [b async for b in src.batches(table, key, cols)]:
            await dst.many(insert, [tuple(r) for r in batch])
        report.counts.append((table, await src.count(table), await dst.count(table)))
        say(f"{table}: {report.counts[-1][1]} rows")
    await _copy_chunks(src, dst, report, say)
    if dst.pg:  # identity columns continue after the copied keys
        for table, col in IDENTITY.items():
            await dst.statement(f"SELECT setval(pg_get_serial_sequence('{table}', '{col}'), "
                           f"GREATEST((SELECT max({col}) FROM {table}), 1))")
    await _copy_terms(src, dst, report, say)
    await _copy_vectors(src, dst, report, say)
    marks = await src.rows("SELECT name, last_pk FROM index_marks")
    await dst.many(f"INSERT INTO index_marks (name, last_pk) VALUES ({dst.marks(2)}) "
                   "ON CONFLICT (name) DO UPDATE SET last_pk = excluded.last_pk", [tuple(r) for r in marks])
    report.counts.append(("index_marks", len(marks), await dst.count("index_marks")))
    return report


async def _copy_terms(src: _Side, dst: _Side, report: Report, say: Callable[[str], None]) -> None:
    from hermes_hub.infra.storage.postgres.indexing import MESSAGE_DOC

    key = "pk" if src.pg else "rowid"
    if dst.pg:
        memory_sql = ("INSERT INTO memory_terms (pk, user_id, terms, doc) SELECT $1, user_id, $2::text, "
                      "to_tsvector('english', $2::text) FROM memories WHERE pk = $1")
        message_sql = (f"INSERT INTO message_terms (pk, user_id, terms, context, doc) SELECT $1, user_id, $3, $4, "
                       f"{MESSAGE_DOC} FROM messages WHERE pk = $2")
    else:
        memory_sql = "INSERT INTO memory_terms (rowid, terms) VALUES (?, ?)"
        message_sql = "INSERT INTO message_terms (rowid, terms, context) VALUES (?, ?, ?)"
    async for batch in src.batches("memory_terms", key, f"{key}, terms"):
        await dst.many(memory_sql, [tuple(r) for r in batch])
    async for batch in src.batches("message_terms", key, f"{key}, terms, context"):
        await dst.many(message_sql, [(r[0], r[0], r[1], r[2]) if dst.pg else tuple(r) for r in batch])
    for table in ("memory_terms", "message_terms"):
        report.counts.append((table, await src.count(table), await dst.count(table)))
        say(f"{table}: {report.counts[-1][1]} rows (index rebuilt by the target)")


async def _copy_vectors(src: _Side, dst: _Side, report: Report, say: Callable[[str], None]) -> None:
    for name, source, embedder, dims in await src.rows("SELECT name, source, embedder, dims FROM vector_tables "
                                                       "ORDER BY name"):
        made = await dst.store.ensure_vector_table(source, embedder, dims)
        if made != name:
            raise StorageError(f"vector table {name!r} maps to {made!r} in the target; was it renamed by hand?")
        key = "pk" if src.pg else "rowid"
        vec = "embedding::real[]" if src.pg else "embedding"
        insert = (f"INSERT INTO {name} (pk, user_id, embedding) VALUES ($1, $2, $3::real[]::vector)" if dst.pg
                  else f"INSERT INTO {name} (rowid, user_id, embedding) VALUES (?, ?, ?)")
        async for batch in src.batches(name, key, f"{key}, user_id, {vec}"):
            rows = [(pk, uid, _floats(v)) for pk, uid, v in batch]
            if not dst.pg:
                rows = [(pk, uid, struct.pack(f"{len(v)}f", *v)) for pk, uid, v in rows]
            await dst.many(insert, rows)
        report.counts.append((name, await src.count(name), await dst.count(name)))
        say(f"{name}: {report.counts[-1][1]} vectors ({embedder}, {dims} dims)")


async def _copy_chunks(src: _Side, dst: _Side, report: Report, say: Callable[[str], None]) -> None:
    """Documents' chunks, with their vectors as they are and their word index rebuilt the target's way
    (from the same ``index_text`` of the title, heading path and text that ``add_document`` indexes)."""
    from hermes_hub.infra.storage.terms import index_text

    cols = ", ".join(f"c.{c}" for c in CHUNK_COLUMNS)
    values = dst.marks(len(CHUNK_COLUMNS))
    if dst.pg:
        insert = (f"INSERT INTO doc_chunks ({', '.join(CHUNK_COLUMNS)}, doc) VALUES ({values}, "
                  "setweight(to_tsvector('english', $10), 'B') || setweight(to_tsvector('english', $11), 'A'))")
    else:
        insert = f"INSERT INTO doc_chunks ({', '.join(CHUNK_COLUMNS)}) VALUES ({values})"
    offset = 0
    while batch := await src.rows(f"SELECT {cols}, d.title FROM doc_chunks c JOIN documents d ON d.pk = c.document_pk "
                                  f"ORDER BY c.pk LIMIT {BATCH} OFFSET {offset}"):
        offset += len(batch)
        rows = [tuple(r[:-1]) for r in batch]
        terms = [(index_text(f"{r[-1]} {r[5]}"), index_text(r[6])) for r in batch]  # title + heading, text
        if dst.pg:
            await dst.many(insert, [(*row, *words) for row, words in zip(rows, terms, strict=True)])
        else:
            await dst.many(insert, rows)
            await dst.many("INSERT INTO doc_chunk_terms (rowid, heading, terms) VALUES (?, ?, ?)",
                           [(row[0], *words) for row, words in zip(rows, terms, strict=True)])
    report.counts.append(("doc_chunks", await src.count("doc_chunks"), await dst.count("doc_chunks")))
    say(f"doc_chunks: {report.counts[-1][1]} rows (word index rebuilt by the target)")
