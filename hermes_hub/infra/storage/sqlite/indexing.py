"""SQL of background indexing: the index marks (every row up to a mark is indexed), the rows past
them, and the messages' text index. One process writes a SQLite file, so there are no claims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Connection = Any


def mark(db: Connection, name: str) -> int:
    row = db.execute("SELECT last_pk FROM index_marks WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def set_mark(db: Connection, name: str, last_pk: int) -> None:
    db.execute("INSERT INTO index_marks (name, last_pk) VALUES (?, ?) "
               "ON CONFLICT (name) DO UPDATE SET last_pk = excluded.last_pk", (name, last_pk))


def pending(db: Connection, source: str, name: str) -> int:
    table = "memories" if source == "memories" else "messages"
    return db.execute(f"SELECT COUNT(*) FROM {table} WHERE pk > ?", (mark(db, name),)).fetchone()[0]


def unindexed(db: Connection, source: str, name: str, limit: int) -> list[tuple[int, str, str]]:
    """(pk, user_id, text) of the next rows past the mark ``name``."""
    table, col = ("memories", "text") if source == "memories" else ("messages", "content")
    return db.execute(f"SELECT pk, user_id, {col} FROM {table} WHERE pk > ? ORDER BY pk LIMIT ?",
                      (mark(db, name), limit)).fetchall()


def unindexed_messages(db: Connection, name: str, limit: int) -> list[tuple[int, str, str, str]]:
    """(pk, user_id, content, previous message's content) of the next messages past the mark ``name``."""
    return db.execute("SELECT m.pk, m.user_id, m.content, COALESCE(p.content, '') FROM messages m "
                      "LEFT JOIN messages p ON p.session_id = m.session_id AND p.seq = m.seq - 1 "
                      "WHERE m.pk > ? ORDER BY m.pk LIMIT ?", (mark(db, name), limit)).fetchall()


def index_message_terms(db: Connection, rows: Sequence[tuple[int, str, str]], name: str, last_pk: int,
                        owner: str | None = None) -> bool:
    """``(pk, terms, context terms)`` rows, and the mark moved past them (``owner``: see ``vectors``)."""
    for pk, terms, context in rows:
        db.execute("INSERT OR REPLACE INTO message_terms (rowid, terms, context) VALUES (?, ?, ?)",
                   (pk, terms, context))
    set_mark(db, name, last_pk)
    return True


def reset_message_terms(db: Connection, name: str) -> None:
    """Empty the messages' text index and its mark, so the indexer rebuilds it."""
    db.execute("DELETE FROM message_terms")
    db.execute("DELETE FROM index_marks WHERE name = ?", (name,))
