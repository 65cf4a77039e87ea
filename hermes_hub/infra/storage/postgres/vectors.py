"""PostgreSQL SQL of vectors: one pgvector table per source and embedder with an HNSW index (cosine),
every search filtered by the user (pgvector's iterative scan keeps filling the ``k`` from the user's rows)."""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.postgres import claims
from hermes_hub.infra.storage.postgres.indexing import finish
from hermes_hub.infra.storage.records import RankedRow
from hermes_hub.infra.storage.rows import vector_table

Connection = Any
EF_SEARCH = 100  # candidates HNSW keeps per search (pgvector's default 40 loses recall at k=20)
HNSW_MAX_DIMS = 2000  # pgvector's limit for an HNSW index on ``vector``; wider tables are scanned exactly


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
    if not await finish(db, name, last_pk, owner):
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
