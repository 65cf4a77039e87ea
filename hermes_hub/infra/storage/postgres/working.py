"""PostgreSQL SQL of working memory (SQLite's ``working``): one text per session, and its migration
(p011, listed in ``schema``). It goes with its session; every read and write filters by the user id."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.rows import session_not_found

Connection = Any


async def p017_working_memory(db: Connection) -> None:
    """SQLite's m017."""
    await db.execute("""CREATE TABLE working_memory (
        session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        user_id    text NOT NULL,
        text       text NOT NULL,
        updated_at double precision NOT NULL)""")


async def _check(db: Connection, user_id: str, session_id: str) -> None:
    if await db.fetchval("SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2", session_id, user_id) is None:
        raise session_not_found(session_id)


async def get_working(db: Connection, user_id: str, session_id: str) -> tuple[str, float | None]:
    await _check(db, user_id, session_id)
    row = await db.fetchrow("SELECT text, updated_at FROM working_memory WHERE session_id = $1 AND user_id = $2",
                            session_id, user_id)
    return (row[0], row[1]) if row else ("", None)


async def set_working(db: Connection, user_id: str, session_id: str, text: str, at: float) -> None:
    await _check(db, user_id, session_id)
    if not text:
        await db.execute("DELETE FROM working_memory WHERE session_id = $1 AND user_id = $2", session_id, user_id)
        return
    await db.execute("INSERT INTO working_memory (session_id, user_id, text, updated_at) VALUES ($1, $2, $3, $4) "
                     "ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
                     session_id, user_id, text, at)
