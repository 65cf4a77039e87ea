"""PostgreSQL SQL of documents, their chunks, the chunks' word index (a weighted ``tsvector`` of words
and CJK bigrams: heading path B, text A) and vectors (``bytea``, float32), and migration p010. Every
read filters by the caller: their own rows, or shared ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.documents import HEADING_SEP, ChunkRow, DocumentRecord, document_not_found
from hermes_hub.infra.storage.postgres.memories import tsquery
from hermes_hub.infra.storage.records import RankedRow
from hermes_hub.infra.storage.rows import dt, ts
from hermes_hub.infra.storage.terms import index_text

Connection = Any
_COLS = "id, user_id, shared, title, origin, format, chars, chunks, created_at"


async def p015_documents(db: Connection) -> None:
    """SQLite's m016: documents, their chunks, word index and vectors."""
    await db.execute("""CREATE TABLE documents (
        pk         bigserial PRIMARY KEY,
        id         text NOT NULL UNIQUE,
        user_id    text NOT NULL,
        shared     integer NOT NULL DEFAULT 0,
        title      text NOT NULL,
        origin     text NOT NULL,
        format     text NOT NULL,
        chars      integer NOT NULL,
        chunks     integer NOT NULL,
        created_at double precision NOT NULL,
        text       text NOT NULL)""")
    await db.execute("CREATE INDEX documents_by_user ON documents (user_id, pk)")
    await db.execute("CREATE INDEX documents_shared ON documents (shared, pk)")
    await db.execute("""CREATE TABLE doc_chunks (
        pk          bigserial PRIMARY KEY,
        document_pk bigint NOT NULL REFERENCES documents (pk) ON DELETE CASCADE,
        user_id     text NOT NULL,
        shared      integer NOT NULL DEFAULT 0,
        position    integer NOT NULL,
        heading     text NOT NULL,
        text        text NOT NULL,
        doc         tsvector NOT NULL,
        embedder    text,
        embedding   bytea)""")
    await db.execute("CREATE INDEX doc_chunks_by_document ON doc_chunks (document_pk)")
    await db.execute("CREATE INDEX doc_chunks_by_user ON doc_chunks (user_id, embedder)")
    await db.execute("CREATE INDEX doc_chunks_shared ON doc_chunks (shared, embedder)")
    await db.execute("CREATE INDEX doc_chunks_terms ON doc_chunks USING gin (doc)")


async def add_document(db: Connection, r: DocumentRecord, chunks: Sequence[ChunkRow]) -> None:
    doc_pk = await db.fetchval(f"INSERT INTO documents ({_COLS}, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                               f"RETURNING pk", r.id, r.user_id, int(r.shared), r.title, r.origin, r.format, r.chars,
                               r.chunks, ts(r.created_at), r.text)
    rows = [(doc_pk, r.user_id, int(r.shared), c.position, HEADING_SEP.join(c.heading), c.text,
             index_text(f"{r.title} {HEADING_SEP.join(c.heading)}"), index_text(c.text)) for c in chunks]
    await db.executemany("INSERT INTO doc_chunks (document_pk, user_id, shared, position, heading, text, doc) VALUES "
                         "($1, $2, $3, $4, $5, $6, setweight(to_tsvector('english', $7), 'B') || "
                         "setweight(to_tsvector('english', $8), 'A'))", rows)


def _record(row: Sequence[Any], text: str = "") -> DocumentRecord:
    did, uid, shared, title, origin, fmt, chars, chunks, created = row
    return DocumentRecord(did, uid, bool(shared), title, origin, fmt, chars, chunks, dt(created), text)


async def list_documents(db: Connection, user_id: str, limit: int,
                         before_pk: int | None) -> list[tuple[int, DocumentRecord]]:
    rows = await db.fetch(f"SELECT pk, {_COLS} FROM documents WHERE (user_id = $1 OR shared = 1) AND "
                          f"($2::bigint IS NULL OR pk < $2) ORDER BY pk DESC LIMIT $3", user_id, before_pk, limit)
    return [(row[0], _record(tuple(row)[1:])) for row in rows]


async def get_document(db: Connection, user_id: str, document_id: str) -> DocumentRecord:
    row = await db.fetchrow(f"SELECT {_COLS}, text FROM documents WHERE id = $1 AND (user_id = $2 OR shared = 1)",
                            document_id, user_id)
    if row is None:
        raise document_not_found(document_id)
    return _record(tuple(row)[:-1], row[-1])


async def delete_documents(db: Connection, user_id: str, document_id: str | None, admin: bool) -> int:
    if document_id is None:
        return int((await db.execute("DELETE FROM documents WHERE user_id = $1", user_id)).split()[-1])
    row = await db.fetchrow("SELECT pk, user_id FROM documents WHERE id = $1 AND (user_id = $2 OR shared = 1)",
                            document_id, user_id)
    if row is None:
        raise document_not_found(document_id)
    if row[1] != user_id and not admin:
        raise InvalidInput(f"document '{document_id}' is shared with everyone by an admin; only an admin may forget it")
    await db.execute("DELETE FROM documents WHERE pk = $1", row[0])  # chunks cascade
    return 1


async def chunk_lexical(db: Connection, user_id: str, match: str, limit: int) -> list[RankedRow]:
    query = tsquery(match)
    if query is None:
        return []
    rows = await db.fetch("SELECT c.pk, -ts_rank('{0.1, 0.2, 0.5, 1}', c.doc, q, 1) AS score FROM doc_chunks c, "
                          "to_tsquery('english', $1) q WHERE c.doc @@ q AND (c.user_id = $2 OR c.shared = 1) "
                          "ORDER BY score, c.pk LIMIT $3", query, user_id, limit)
    return [RankedRow(pk, score) for pk, score in rows]


async def chunks_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, ChunkRow]:
    if not pks:
        return {}
    rows = await db.fetch("SELECT c.pk, c.position, c.heading, c.text, d.id, d.title FROM doc_chunks c JOIN documents d "
                          "ON d.pk = c.document_pk WHERE c.pk = ANY($1::bigint[]) AND (c.user_id = $2 OR c.shared = 1)",
                          list(pks), user_id)
    return {pk: ChunkRow(pos, tuple(h.split(HEADING_SEP)) if h else (), text, did, title)
            for pk, pos, h, text, did, title in (tuple(r) for r in rows)}


async def chunk_vectors(db: Connection, user_id: str, embedder: str, after_pk: int) -> list[tuple[int, bytes]]:
    rows = await db.fetch("SELECT pk, embedding FROM doc_chunks WHERE (user_id = $1 OR shared = 1) AND embedder = $2 "
                          "AND pk > $3", user_id, embedder, after_pk)
    return [(r[0], bytes(r[1])) for r in rows]


async def chunk_generation(db: Connection, user_id: str, embedder: str) -> tuple[int, int]:
    row = await db.fetchrow("SELECT count(*), coalesce(max(pk), 0) FROM doc_chunks WHERE (user_id = $1 OR shared = 1) "
                            "AND embedder = $2", user_id, embedder)
    return int(row[0]), int(row[1])


async def unembedded_chunks(db: Connection, embedder: str, limit: int) -> list[tuple[int, str]]:
    rows = await db.fetch("SELECT pk, heading, text FROM doc_chunks WHERE embedder IS DISTINCT FROM $1 ORDER BY pk "
                          "LIMIT $2", embedder, limit)
    return [(pk, f"{heading}\n{text}" if heading else text) for pk, heading, text in (tuple(r) for r in rows)]


async def set_chunk_vectors(db: Connection, embedder: str, rows: Sequence[tuple[int, bytes]]) -> None:
    await db.executemany("UPDATE doc_chunks SET embedder = $1, embedding = $2 WHERE pk = $3",
                         [(embedder, blob, pk) for pk, blob in rows])


async def document_counts(db: Connection, user_id: str | None) -> dict[str, int]:
    where, args = ("WHERE user_id = $1 OR shared = 1", (user_id,)) if user_id is not None else ("", ())
    docs = await db.fetchval(f"SELECT count(*) FROM documents {where}", *args)
    row = await db.fetchrow(f"SELECT count(*), count(*) FILTER (WHERE embedding IS NULL) FROM doc_chunks {where}", *args)
    return {"documents": int(docs), "chunks": int(row[0]), "unembedded": int(row[1])}
