"""SQL of vectors (sqlite-vec ``vec0`` tables, one per source and embedder, partitioned by user, so a
KNN search only ever scans the caller's own vectors)."""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.records import RankedRow
from hermes_hub.infra.storage.rows import vector_table
from hermes_hub.infra.storage.sqlite.indexing import set_mark

Connection = Any


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
                last_pk: int, owner: str | None = None) -> bool:
    """Insert ``(pk, user_id, vector)`` rows and move the mark, in one transaction. ``owner`` names a
    claim where replicas share a database; one process writes a SQLite file, so it always holds."""
    for pk, user_id, vector in rows:
        db.execute(f"DELETE FROM {table} WHERE rowid = ?", (pk,))
        db.execute(f"INSERT INTO {table} (rowid, user_id, embedding) VALUES (?, ?, ?)", (pk, user_id, pack(vector)))
    set_mark(db, name, last_pk)
    return True


def nearest(db: Connection, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
    rows = db.execute(f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ? AND user_id = ? "
                      f"ORDER BY distance", (pack(vector), k, user_id))
    return [RankedRow(pk, distance) for pk, distance in rows]


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
