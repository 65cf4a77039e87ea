"""PostgreSQL SQL of agent runs' artifacts (migration p008). Every read filters by the caller's user id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import ArtifactRecord
from hermes_hub.infra.storage.rows import artifact_not_found, dt, ts

Connection = Any
_COLS = "id, user_id, session_id, run_id, tool, mime_type, chars, created_at, truncated"


async def add_artifact(db: Connection, r: ArtifactRecord) -> None:
    await db.execute(f"INSERT INTO artifacts ({_COLS}, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                     r.artifact_id, r.user_id, r.session_id, r.run_id, r.tool, r.mime_type, r.chars,
                     ts(r.created_at), int(r.truncated), r.text)


async def get_artifact(db: Connection, user_id: str, artifact_id: str, offset: int,
                       limit: int | None) -> ArtifactRecord:
    page = "substr(text, $3)" if limit is None else "substr(text, $3, $4)"
    args = [user_id, artifact_id, offset + 1] + ([] if limit is None else [limit])
    row = await db.fetchrow(f"SELECT {_COLS}, {page} FROM artifacts WHERE user_id = $1 AND id = $2", *args)
    if row is None:
        raise artifact_not_found(artifact_id)
    aid, uid, sid, rid, tool, mime, chars, created, truncated, text = tuple(row)
    return ArtifactRecord(aid, uid, sid, rid, tool, mime, text or "", chars, dt(created), bool(truncated))


async def prune_artifacts(db: Connection, before: datetime) -> int:
    return int((await db.execute("DELETE FROM artifacts WHERE created_at < $1", ts(before))).split()[-1])


async def artifact_counts(db: Connection, user_id: str | None) -> dict[str, int]:
    if user_id is None:
        row = await db.fetchrow("SELECT count(*), coalesce(sum(chars), 0) FROM artifacts")
    else:
        row = await db.fetchrow("SELECT count(*), coalesce(sum(chars), 0) FROM artifacts WHERE user_id = $1", user_id)
    return {"count": int(row[0]), "chars": int(row[1])}
