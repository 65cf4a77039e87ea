"""SQL of documents, their chunks, the chunks' word index (FTS5) and vectors, and their migration
(m016, listed in ``migrations``). Every read filters by the caller: their own rows, or shared ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.documents import HEADING_SEP, ChunkRow, DocumentRecord, document_not_found
from hermes_hub.infra.storage.records import RankedRow
from hermes_hub.infra.storage.rows import dt, ts
from hermes_hub.infra.storage.terms import index_text

Connection = Any
_COLS = "id, user_id, shared, title, origin, format, chars, chunks, created_at"
_MINE = "(user_id = ? OR shared = 1)"
HEADING_WEIGHT = 0.5  # of a chunk's heading path terms in BM25, against 1.0 for its text


def m021_documents(db: Connection) -> None:
    db.execute("""
        CREATE TABLE documents (
            pk         INTEGER PRIMARY KEY AUTOINCREMENT,
            id         TEXT NOT NULL UNIQUE,
            user_id    TEXT NOT NULL,
            shared     INTEGER NOT NULL DEFAULT 0,
            title      TEXT NOT NULL,
            origin     TEXT NOT NULL,
            format     TEXT NOT NULL,
            chars      INTEGER NOT NULL,
            chunks     INTEGER NOT NULL,
            created_at REAL NOT NULL,
            text       TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX documents_by_user ON documents (user_id, pk)")
    db.execute("CREATE INDEX documents_shared ON documents (shared, pk)")
    db.execute("""
        CREATE TABLE doc_chunks (
            pk          INTEGER PRIMARY KEY AUTOINCREMENT,  -- rowid of doc_chunk_terms
            document_pk INTEGER NOT NULL REFERENCES documents (pk) ON DELETE CASCADE,
            user_id     TEXT NOT NULL,
            shared      INTEGER NOT NULL DEFAULT 0,
            position    INTEGER NOT NULL,
            heading     TEXT NOT NULL,
            text        TEXT NOT NULL,
            embedder    TEXT,
            embedding   BLOB
        )""")
    db.execute("CREATE INDEX doc_chunks_by_document ON doc_chunks (document_pk)")
    db.execute("CREATE INDEX doc_chunks_by_user ON doc_chunks (user_id, embedder)")
    db.execute("CREATE INDEX doc_chunks_shared ON doc_chunks (shared, embedder)")
    db.execute("CREATE INDEX doc_chunks_unembedded ON doc_chunks (embedder, pk)")
    db.execute("CREATE VIRTUAL TABLE doc_chunk_terms USING fts5 (heading, terms, "
               "tokenize = 'porter unicode61 remove_diacritics 2')")


def add_document(db: Connection, r: DocumentRecord, chunks: Sequence[ChunkRow]) -> None:
    cur = db.execute(f"INSERT INTO documents ({_COLS}, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (r.id, r.user_id, int(r.shared), r.title, r.origin, r.format, r.chars, r.chunks,
                      ts(r.created_at), r.text))
    doc_pk = cur.lastrowid
    for c in chunks:
        heading = HEADING_SEP.join(c.heading)
        pk = db.execute("INSERT INTO doc_chunks (document_pk, user_id, shared, position, heading, text) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (doc_pk, r.user_id, int(r.shared), c.position, heading,
                                                      c.text)).lastrowid
        db.execute("INSERT INTO doc_chunk_terms (rowid, heading, terms) VALUES (?, ?, ?)",
                   (pk, index_text(f"{r.title} {heading}"), index_text(c.text)))


def _record(row: Sequence[Any], text: str = "") -> DocumentRecord:
    did, uid, shared, title, origin, fmt, chars, chunks, created = row
    return DocumentRecord(did, uid, bool(shared), title, origin, fmt, chars, chunks, dt(created), text)


def list_documents(db: Connection, user_id: str, limit: int, before_pk: int | None) -> list[tuple[int, DocumentRecord]]:
    where, args = f"{_MINE}", [user_id]
    if before_pk is not None:
        where += " AND pk < ?"
        args.append(before_pk)
    rows = db.execute(f"SELECT pk, {_COLS} FROM documents WHERE {where} ORDER BY pk DESC LIMIT ?", (*args, limit))
    return [(row[0], _record(row[1:])) for row in rows]


def get_document(db: Connection, user_id: str, document_id: str) -> DocumentRecord:
    row = db.execute(f"SELECT {_COLS}, text FROM documents WHERE id = ? AND {_MINE}", (document_id, user_id)).fetchone()
    if row is None:
        raise document_not_found(document_id)
    return _record(row[:-1], row[-1])


def delete_documents(db: Connection, user_id: str, document_id: str | None, admin: bool) -> int:
    if document_id is None:
        pks = [pk for (pk,) in db.execute("SELECT pk FROM documents WHERE user_id = ?", (user_id,))]
    else:
        row = db.execute(f"SELECT pk, user_id, shared FROM documents WHERE id = ? AND {_MINE}",
                         (document_id, user_id)).fetchone()
        if row is None:
            raise document_not_found(document_id)
        if row[1] != user_id and not admin:
            raise InvalidInput(f"document '{document_id}' is shared with everyone by an admin; only an admin may "
                               f"forget it")
        pks = [row[0]]
    for pk in pks:
        db.execute("DELETE FROM doc_chunk_terms WHERE rowid IN (SELECT pk FROM doc_chunks WHERE document_pk = ?)", (pk,))
        db.execute("DELETE FROM doc_chunks WHERE document_pk = ?", (pk,))
        db.execute("DELETE FROM documents WHERE pk = ?", (pk,))
    return len(pks)


def chunk_lexical(db: Connection, user_id: str, match: str, limit: int) -> list[RankedRow]:
    rows = db.execute(f"SELECT t.rowid, bm25(doc_chunk_terms, {HEADING_WEIGHT}, 1.0) AS score FROM doc_chunk_terms t "
                      f"JOIN doc_chunks c ON c.pk = t.rowid WHERE doc_chunk_terms MATCH ? AND "
                      f"(c.user_id = ? OR c.shared = 1) ORDER BY score LIMIT ?", (match, user_id, limit))
    return [RankedRow(pk, score) for pk, score in rows]


def chunks_by_pk(db: Connection, user_id: str, pks: Sequence[int]) -> dict[int, ChunkRow]:
    if not pks:
        return {}
    marks = ",".join("?" * len(pks))
    rows = db.execute(f"SELECT c.pk, c.position, c.heading, c.text, d.id, d.title FROM doc_chunks c JOIN documents d "
                      f"ON d.pk = c.document_pk WHERE c.pk IN ({marks}) AND (+c.user_id = ? OR +c.shared = 1)",
                      (*pks, user_id))
    return {pk: ChunkRow(pos, tuple(h.split(HEADING_SEP)) if h else (), text, did, title)
            for pk, pos, h, text, did, title in rows}


def chunk_vectors(db: Connection, user_id: str, embedder: str, after_pk: int) -> list[tuple[int, bytes]]:
    return db.execute("SELECT pk, embedding FROM doc_chunks WHERE (user_id = ? OR shared = 1) AND embedder = ? "
                      "AND pk > ?", (user_id, embedder, after_pk)).fetchall()


def chunk_generation(db: Connection, user_id: str, embedder: str) -> tuple[int, int]:
    n, top = db.execute("SELECT count(*), coalesce(max(pk), 0) FROM doc_chunks WHERE (user_id = ? OR shared = 1) "
                        "AND embedder = ?", (user_id, embedder)).fetchone()
    return int(n), int(top)


def unembedded_chunks(db: Connection, embedder: str, limit: int) -> list[tuple[int, str]]:
    rows = db.execute("SELECT pk, heading, text FROM doc_chunks WHERE embedder IS NULL OR embedder != ? "
                      "ORDER BY pk LIMIT ?", (embedder, limit))
    return [(pk, f"{heading}\n{text}" if heading else text) for pk, heading, text in rows]


def set_chunk_vectors(db: Connection, embedder: str, rows: Sequence[tuple[int, bytes]]) -> None:
    for pk, blob in rows:
        db.execute("UPDATE doc_chunks SET embedder = ?, embedding = ? WHERE pk = ?", (embedder, blob, pk))


def document_counts(db: Connection, user_id: str | None) -> dict[str, int]:
    where, args = (f"WHERE {_MINE}", (user_id,)) if user_id is not None else ("", ())
    docs = db.execute(f"SELECT count(*) FROM documents {where}", args).fetchone()[0]
    chunks, bare = db.execute(f"SELECT count(*), coalesce(sum(embedding IS NULL), 0) FROM doc_chunks {where}",
                              args).fetchone()
    return {"documents": int(docs), "chunks": int(chunks), "unembedded": int(bare)}
