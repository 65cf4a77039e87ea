"""PostgreSQL SQL of background indexing: the index marks, the rows past them (claimed per batch
when replicas share the database: ``claims``), and the messages' text index (a ``tsvector``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.postgres import claims

Connection = Any
# the message's own terms weigh A, the previous message's D (``memories.CONTEXT_WEIGHT``)
MESSAGE_DOC = "setweight(to_tsvector('english', $3), 'A') || setweight(to_tsvector('english', $4), 'D')"


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


async def finish(db: Connection, name: str, last_pk: int, owner: str | None) -> bool:
    """Move the mark past a batch (its claim done, when claimed); False: the claim is another's now."""
    if owner is not None:
        return await claims.finish(db, name, owner, last_pk)
    await set_mark(db, name, last_pk)
    return True


async def index_message_terms(db: Connection, rows: Sequence[tuple[int, str, str]], name: str, last_pk: int,
                              owner: str | None) -> bool:
    if not await finish(db, name, last_pk, owner):
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
