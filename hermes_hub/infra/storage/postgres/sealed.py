"""PostgreSQL SQL of sealed secrets (``hermes_hub.services.vault``): one row per user, kind and name."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.records import SealedRecord
from hermes_hub.infra.storage.rows import SEALED_COLS, sealed_record, ts

Connection = Any


async def put_sealed(db: Connection, rec: SealedRecord) -> None:
    await db.execute(f"INSERT INTO sealed_secrets ({SEALED_COLS}) VALUES ($1, $2, $3, $4, $5, $6) "
                     "ON CONFLICT (user_id, kind, name) DO UPDATE SET key_id = excluded.key_id, "
                     "sealed = excluded.sealed, updated_at = excluded.updated_at",
                     rec.user_id, rec.kind, rec.name, rec.key_id, rec.sealed, ts(rec.updated_at))


async def get_sealed(db: Connection, user_id: str, kind: str, name: str) -> SealedRecord | None:
    row = await db.fetchrow(f"SELECT {SEALED_COLS} FROM sealed_secrets "
                            "WHERE user_id = $1 AND kind = $2 AND name = $3", user_id, kind, name)
    return sealed_record(tuple(row)) if row else None


async def delete_sealed(db: Connection, user_id: str, kind: str, name: str) -> bool:
    return await db.fetchrow("DELETE FROM sealed_secrets WHERE user_id = $1 AND kind = $2 AND name = $3 "
                             "RETURNING 1", user_id, kind, name) is not None


async def list_sealed(db: Connection, user_id: str | None, kind: str | None) -> list[SealedRecord]:
    rows = await db.fetch(f"SELECT {SEALED_COLS} FROM sealed_secrets WHERE ($1::text IS NULL OR user_id = $1) "
                          "AND ($2::text IS NULL OR kind = $2) ORDER BY user_id, kind, name", user_id, kind)
    return [sealed_record(tuple(r)) for r in rows]


async def sealed_owners(db: Connection, kind: str, name: str) -> list[str]:
    return [r[0] for r in await db.fetch("SELECT user_id FROM sealed_secrets WHERE kind = $1 AND name = $2 "
                                         "ORDER BY user_id", kind, name)]


async def prune_sealed(db: Connection, kind: str, before: float) -> int:
    return int((await db.execute("DELETE FROM sealed_secrets WHERE kind = $1 AND updated_at < $2",
                                 kind, before)).split()[-1])
