"""SQL of memory provenance: which of the user's messages a memory was written from, and its migration
(m016, listed in ``migrations``). A link goes with its memory and with its message (foreign keys that
cascade), so forgetting either leaves no link behind. Every read filters by the caller's user id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.rows import dt

Connection = Any
CHUNK = 500  # ids per IN (...) list


def m022_provenance(db: Connection) -> None:
    db.execute("""
        CREATE TABLE memory_sources (
            memory_pk  INTEGER NOT NULL REFERENCES memories (pk) ON DELETE CASCADE,
            message_pk INTEGER NOT NULL REFERENCES messages (pk) ON DELETE CASCADE,
            user_id    TEXT NOT NULL,
            session_id TEXT NOT NULL,
            PRIMARY KEY (memory_pk, message_pk)
        )""")
    db.execute("CREATE INDEX memory_sources_by_message ON memory_sources (message_pk)")
    db.execute("CREATE INDEX memory_sources_by_session ON memory_sources (user_id, session_id)")


def link(db: Connection, user_id: str, memory_pk: int, message_ids: Sequence[str]) -> None:
    """Link a new memory to the user's messages named (another user's id links nothing)."""
    for start in range(0, len(message_ids), CHUNK):
        chunk = list(message_ids[start:start + CHUNK])
        db.execute(f"INSERT OR IGNORE INTO memory_sources (memory_pk, message_pk, user_id, session_id) "
                   f"SELECT ?, pk, user_id, session_id FROM messages WHERE user_id = ? AND id IN "
                   f"({','.join('?' * len(chunk))})", (memory_pk, user_id, *chunk))


def source_messages(db: Connection, user_id: str, message_ids: Sequence[str]) -> list[tuple[str, str, Any]]:
    """(id, session_id, created_at) of those of ``message_ids`` that are the user's, in append order."""
    out: list[tuple[str, str, Any]] = []
    for start in range(0, len(message_ids), CHUNK):
        chunk = list(message_ids[start:start + CHUNK])
        out += db.execute(f"SELECT pk, id, session_id, created_at FROM messages WHERE user_id = ? AND id IN "
                          f"({','.join('?' * len(chunk))})", (user_id, *chunk)).fetchall()
    return [(mid, sid, dt(at)) for _, mid, sid, at in sorted(out)]


def memories_of_messages(db: Connection, user_id: str, message_pks: Sequence[int]) -> list[tuple[int, int]]:
    """(message pk, memory pk) of every memory written from one of the user's ``message_pks``."""
    if not message_pks:
        return []
    marks = ",".join("?" * len(message_pks))
    return db.execute(f"SELECT message_pk, memory_pk FROM memory_sources WHERE message_pk IN ({marks}) AND "
                      f"+user_id = ?", (*message_pks, user_id)).fetchall()


def only_from_session(db: Connection, user_id: str, session_id: str) -> list[str]:
    """The ids of the user's memories written from messages of ``session_id`` and of no other session."""
    rows = db.execute("SELECT m.id FROM memories m WHERE m.user_id = ? AND m.pk IN (SELECT memory_pk FROM "
                      "memory_sources WHERE user_id = ? AND session_id = ?) AND NOT EXISTS (SELECT 1 FROM "
                      "memory_sources o WHERE o.memory_pk = m.pk AND o.session_id <> ?) ORDER BY m.pk",
                      (user_id, user_id, session_id, session_id))
    return [mid for (mid,) in rows]
