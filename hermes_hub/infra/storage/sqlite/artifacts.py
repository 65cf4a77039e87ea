"""SQL of agent runs' artifacts, and their migration (m014, listed in ``migrations``). Every read filters by the caller's user id; a page is
cut in SQL (``substr`` counts characters), so a page read does not copy the whole text out."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import ArtifactRecord
from hermes_hub.infra.storage.rows import artifact_not_found, dt, ts

Connection = Any
_COLS = "id, user_id, session_id, run_id, tool, mime_type, chars, created_at, truncated"


def add_artifact(db: Connection, r: ArtifactRecord) -> None:
    db.execute(f"INSERT INTO artifacts ({_COLS}, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (r.artifact_id, r.user_id, r.session_id, r.run_id, r.tool, r.mime_type, r.chars, ts(r.created_at),
                int(r.truncated), r.text))


def get_artifact(db: Connection, user_id: str, artifact_id: str, offset: int, limit: int | None) -> ArtifactRecord:
    page, args = ("substr(text, ?)", (offset + 1,)) if limit is None else ("substr(text, ?, ?)", (offset + 1, limit))
    row = db.execute(f"SELECT {_COLS}, {page} FROM artifacts WHERE user_id = ? AND id = ?",
                     (*args, user_id, artifact_id)).fetchone()
    if row is None:
        raise artifact_not_found(artifact_id)
    return _record(row)


def _record(row: tuple[Any, ...]) -> ArtifactRecord:
    aid, uid, sid, rid, tool, mime, chars, created, truncated, text = row
    return ArtifactRecord(aid, uid, sid, rid, tool, mime, text or "", chars, dt(created), bool(truncated))


def prune_artifacts(db: Connection, before: datetime) -> int:
    return db.execute("DELETE FROM artifacts WHERE created_at < ?", (ts(before),)).rowcount


def artifact_counts(db: Connection, user_id: str | None) -> dict[str, int]:
    where, args = ("WHERE user_id = ?", (user_id,)) if user_id is not None else ("", ())
    n, chars = db.execute(f"SELECT count(*), coalesce(sum(chars), 0) FROM artifacts {where}", args).fetchone()
    return {"count": int(n), "chars": int(chars)}


def m015_artifacts(db: Connection) -> None:
    # Whole tool results of agent runs (the model read a cut copy); they go with their session.
    db.execute("""
        CREATE TABLE artifacts (
            id         TEXT PRIMARY KEY,
            user_id    TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            run_id     TEXT NOT NULL,
            tool       TEXT NOT NULL,
            mime_type  TEXT NOT NULL,
            chars      INTEGER NOT NULL,
            created_at REAL NOT NULL,
            truncated  INTEGER NOT NULL DEFAULT 0,
            text       TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX artifacts_by_session ON artifacts (session_id)")
    db.execute("CREATE INDEX artifacts_by_age ON artifacts (created_at)")
