"""PostgreSQL SQL of memory provenance (SQLite's ``provenance``): which of the user's messages a memory
was written from, and its migration (p010, listed in ``schema``). Links cascade with their memory and
their message; every read filters by the caller's user id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.rows import dt

Connection = Any


async def p016_provenance(db: Connection) -> None:
    """SQLite's m016."""
    await db.execute("""CREATE TABLE memory_sources (
        memory_pk  bigint NOT NULL REFERENCES memories (pk) ON DELETE CASCADE,
        message_pk bigint NOT NULL REFERENCES messages (pk) ON DELETE CASCADE,
        user_id    text NOT NULL,
        session_id text NOT NULL,
        PRIMARY KEY (memory_pk, message_pk))""")
    await db.execute("CREATE INDEX memory_sources_by_message ON memory_sources (message_pk)")
    await db.execute("CREATE INDEX memory_sources_by_session ON memory_sources (user_id, session_id)")


async def link(db: Connection, user_id: str, memory_pk: int, message_ids: Sequence[str]) -> None:
    if message_ids:
        await db.execute("INSERT INTO memory_sources (memory_pk, message_pk, user_id, session_id) "
                         "SELECT $1, pk, user_id, session_id FROM messages WHERE user_id = $2 AND id = ANY($3) "
                         "ON CONFLICT DO NOTHING", memory_pk, user_id, list(message_ids))


async def source_messages(db: Connection, user_id: str, message_ids: Sequence[str]) -> list[tuple[str, str, Any]]:
    rows = await db.fetch("SELECT id, session_id, created_at FROM messages WHERE user_id = $1 AND id = ANY($2) "
                          "ORDER BY pk", user_id, list(message_ids))
    return [(r[0], r[1], dt(r[2])) for r in rows]


async def memories_of_messages(db: Connection, user_id: str, message_pks: Sequence[int]) -> list[tuple[int, int]]:
    if not message_pks:
        return []
    rows = await db.fetch("SELECT message_pk, memory_pk FROM memory_sources WHERE message_pk = ANY($1) AND "
                          "user_id = $2", list(message_pks), user_id)
    return [(r[0], r[1]) for r in rows]


async def only_from_session(db: Connection, user_id: str, session_id: str) -> list[str]:
    rows = await db.fetch("SELECT m.id FROM memories m WHERE m.user_id = $1 AND m.pk IN (SELECT memory_pk FROM "
                          "memory_sources WHERE user_id = $1 AND session_id = $2) AND NOT EXISTS (SELECT 1 FROM "
                          "memory_sources o WHERE o.memory_pk = m.pk AND o.session_id <> $2) ORDER BY m.pk",
                          user_id, session_id)
    return [r[0] for r in rows]
