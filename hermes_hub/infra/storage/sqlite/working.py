"""SQL of working memory: one text per session, what matters for the task in progress, and its migration
(m017, listed in ``migrations``). It goes with its session (a foreign key that cascades); every read and
write filters by the caller's user id."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.rows import session_not_found

Connection = Any


def m023_working_memory(db: Connection) -> None:
    db.execute("""
        CREATE TABLE working_memory (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            user_id    TEXT NOT NULL,
            text       TEXT NOT NULL,
            updated_at REAL NOT NULL
        )""")


def get_working(db: Connection, user_id: str, session_id: str) -> tuple[str, float | None]:
    """(text, updated_at) of the session's working memory; ('', None) when it has none."""
    if db.execute("SELECT 1 FROM sessions WHERE id = ? AND user_id = ?", (session_id, user_id)).fetchone() is None:
        raise session_not_found(session_id)
    row = db.execute("SELECT text, updated_at FROM working_memory WHERE session_id = ? AND user_id = ?",
                     (session_id, user_id)).fetchone()
    return (row[0], row[1]) if row else ("", None)


def set_working(db: Connection, user_id: str, session_id: str, text: str, at: float) -> None:
    """Replace the session's working memory (an empty text clears it)."""
    if db.execute("SELECT 1 FROM sessions WHERE id = ? AND user_id = ?", (session_id, user_id)).fetchone() is None:
        raise session_not_found(session_id)
    if not text:
        db.execute("DELETE FROM working_memory WHERE session_id = ? AND user_id = ?", (session_id, user_id))
        return
    db.execute("INSERT INTO working_memory (session_id, user_id, text, updated_at) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
               (session_id, user_id, text, at))
