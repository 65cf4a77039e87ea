"""SQL of the hub's own OAuth: registered clients, grants (what a person approved) and the hashes of
the flow's secrets (pending requests, codes, access and refresh tokens). Run by ``SQLiteStore``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord
from hermes_hub.infra.storage.rows import GRANT_COLS, OAUTH_TOKEN_COLS, grant_record, oauth_token_record, ts

Connection = Any


def m013_oauth(db: Connection) -> None:
    # The hub as an OAuth authorization server for hosts: clients that registered (RFC 7591) or were
    # read from their metadata document, what a person approved (grants), and the flow's secrets as
    # hashes only (pending requests, codes, access and refresh tokens), shared by every replica.
    db.execute("""
        CREATE TABLE oauth_clients (
            client_id  TEXT PRIMARY KEY,
            info       TEXT NOT NULL,
            created_at REAL NOT NULL
        )""")
    db.execute("""
        CREATE TABLE oauth_grants (
            id          TEXT PRIMARY KEY,
            user_id     TEXT NOT NULL,
            role        TEXT NOT NULL,
            client_id   TEXT NOT NULL,
            client_name TEXT NOT NULL,
            resource    TEXT NOT NULL,
            scopes      TEXT NOT NULL,
            created_at  REAL NOT NULL,
            revoked_at  REAL
        )""")
    db.execute("CREATE INDEX oauth_grants_by_user ON oauth_grants (user_id, created_at)")
    db.execute("""
        CREATE TABLE oauth_tokens (
            token_hash TEXT PRIMARY KEY,
            kind       TEXT NOT NULL CHECK (kind IN ('request', 'code', 'access', 'refresh')),
            grant_id   TEXT REFERENCES oauth_grants (id) ON DELETE CASCADE,
            client_id  TEXT NOT NULL,
            data       TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            used_at    REAL
        )""")
    db.execute("CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at)")


def add_oauth_client(db: Connection, client_id: str, info: str, at: datetime) -> None:
    db.execute("INSERT INTO oauth_clients (client_id, info, created_at) VALUES (?, ?, ?) "
               "ON CONFLICT (client_id) DO UPDATE SET info = excluded.info", (client_id, info, ts(at)))


def find_oauth_client(db: Connection, client_id: str) -> str | None:
    row = db.execute("SELECT info FROM oauth_clients WHERE client_id = ?", (client_id,)).fetchone()
    return row[0] if row else None


def add_oauth_grant(db: Connection, g: OAuthGrantRecord) -> None:
    db.execute(f"INSERT INTO oauth_grants ({GRANT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (g.id, g.user_id, g.role, g.client_id, g.client_name, g.resource, g.scopes, ts(g.created_at),
                ts(g.revoked_at) if g.revoked_at else None))


def find_oauth_grant(db: Connection, grant_id: str) -> OAuthGrantRecord | None:
    row = db.execute(f"SELECT {GRANT_COLS} FROM oauth_grants WHERE id = ?", (grant_id,)).fetchone()
    return grant_record(row) if row else None


def list_oauth_grants(db: Connection, user_id: str | None) -> list[OAuthGrantRecord]:
    if user_id is None:
        rows = db.execute(f"SELECT {GRANT_COLS} FROM oauth_grants ORDER BY created_at, id")
    else:
        rows = db.execute(f"SELECT {GRANT_COLS} FROM oauth_grants WHERE user_id = ? ORDER BY created_at, id",
                          (user_id,))
    return [grant_record(r) for r in rows]


def revoke_oauth_grant(db: Connection, grant_id: str, at: datetime) -> bool:
    cur = db.execute("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (ts(at), grant_id))
    return cur.rowcount == 1


def add_oauth_token(db: Connection, t: OAuthTokenRecord) -> None:
    db.execute(f"INSERT INTO oauth_tokens ({OAUTH_TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (t.token_hash, t.kind, t.grant_id, t.client_id, t.data, ts(t.created_at), ts(t.expires_at),
                ts(t.used_at) if t.used_at else None))


def find_oauth_token(db: Connection, token_hash: str) -> tuple[OAuthTokenRecord, OAuthGrantRecord | None] | None:
    row = db.execute(f"SELECT {OAUTH_TOKEN_COLS} FROM oauth_tokens WHERE token_hash = ?", (token_hash,)).fetchone()
    if row is None:
        return None
    token = oauth_token_record(row)
    return token, find_oauth_grant(db, token.grant_id) if token.grant_id else None


def spend_oauth_token(db: Connection, token_hash: str, at: datetime) -> bool:
    cur = db.execute("UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
                     (ts(at), token_hash))
    return cur.rowcount == 1


def delete_oauth_token(db: Connection, token_hash: str) -> bool:
    return db.execute("DELETE FROM oauth_tokens WHERE token_hash = ?", (token_hash,)).rowcount == 1


def prune_oauth_tokens(db: Connection, expired_before: datetime) -> int:
    return db.execute("DELETE FROM oauth_tokens WHERE expires_at < ?", (ts(expired_before),)).rowcount
