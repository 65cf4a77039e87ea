"""SQL of sealed secrets (``hermes_hub.services.vault``): one row per user, kind and name, replaced on write."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.records import SealedRecord
from hermes_hub.infra.storage.rows import SEALED_COLS, sealed_record, ts

Connection = Any


def m012_sealed_secrets(db: Connection) -> None:
    # Secrets sealed by hermes_hub.services.vault (AES-GCM, bound to user, kind and name): ciphertext only, and the
    # id of the key that sealed it, so a replica holding another key says so plainly.
    db.execute("""
        CREATE TABLE sealed_secrets (
            user_id    TEXT NOT NULL,
            kind       TEXT NOT NULL,
            name       TEXT NOT NULL,
            key_id     TEXT NOT NULL,
            sealed     BLOB NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (user_id, kind, name)
        )""")


def put_sealed(db: Connection, rec: SealedRecord) -> None:
    db.execute(f"INSERT INTO sealed_secrets ({SEALED_COLS}) VALUES (?, ?, ?, ?, ?, ?) "
               "ON CONFLICT (user_id, kind, name) DO UPDATE SET key_id = excluded.key_id, "
               "sealed = excluded.sealed, updated_at = excluded.updated_at",
               (rec.user_id, rec.kind, rec.name, rec.key_id, rec.sealed, ts(rec.updated_at)))


def get_sealed(db: Connection, user_id: str, kind: str, name: str) -> SealedRecord | None:
    row = db.execute(f"SELECT {SEALED_COLS} FROM sealed_secrets WHERE user_id = ? AND kind = ? AND name = ?",
                     (user_id, kind, name)).fetchone()
    return sealed_record(row) if row else None


def delete_sealed(db: Connection, user_id: str, kind: str, name: str) -> bool:
    return db.execute("DELETE FROM sealed_secrets WHERE user_id = ? AND kind = ? AND name = ?",
                      (user_id, kind, name)).rowcount == 1


def list_sealed(db: Connection, user_id: str | None, kind: str | None) -> list[SealedRecord]:
    rows = db.execute(f"SELECT {SEALED_COLS} FROM sealed_secrets WHERE (? IS NULL OR user_id = ?) "
                      "AND (? IS NULL OR kind = ?) ORDER BY user_id, kind, name",
                      (user_id, user_id, kind, kind)).fetchall()
    return [sealed_record(r) for r in rows]


def sealed_owners(db: Connection, kind: str, name: str) -> list[str]:
    """The users holding a value of ``kind`` named ``name`` (a masked call's original: one)."""
    return [r[0] for r in db.execute("SELECT user_id FROM sealed_secrets WHERE kind = ? AND name = ? "
                                     "ORDER BY user_id", (kind, name))]


def prune_sealed(db: Connection, kind: str, before: float) -> int:
    return db.execute("DELETE FROM sealed_secrets WHERE kind = ? AND updated_at < ?", (kind, before)).rowcount
