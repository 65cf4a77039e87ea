"""Secrets at rest: OAuth grants and the values people set, sealed before they reach the store.

A ``Vault`` seals each value with AES-256-GCM (the ``cryptography`` package) under the hub's secret key,
binding it to its user, kind and name (so a sealed value copied into another row does not open), and
keeps only ciphertext and the key's id in the store (``SealedStore``). The key comes from
``HERMES_SECRET_KEY`` (at least 32 characters; every replica on one PostgreSQL database needs the same
one), else from a key file created once with mode 0600: beside the SQLite file, or in the data directory.

    key = load_key(config.storage.url)          # SecretKey: .id names it, never its material
    vault = Vault(store, key)
    await vault.put("alice", "secret", "github", "ghp_...")
    await vault.get("alice", "secret", "github")  # "ghp_..."; None when not set

Nothing here logs, and no error quotes a value or the key.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from hermes_hub.infra.errors import HubError
from hermes_hub.infra.storage import default_data_dir, default_url, is_postgres, sqlite_path
from hermes_hub.infra.storage.base import SealedStore
from hermes_hub.infra.storage.records import SealedRecord, utcnow

KEY_ENV = "HERMES_SECRET_KEY"
KEY_FILE = "secret.key"
MIN_KEY_CHARS = 32
MAX_VALUE_BYTES = 64 * 1024  # a token set, a grant with its refresh token: far below this
_NONCE = 12
_INFO = b"hermes-hub vault v1"
_MAKE_KEY = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


class VaultError(HubError):
    """The secret key is missing, unusable or not the one a value was sealed with."""


@dataclass(frozen=True)
class SecretKey:
    """The hub's secret key: 32 bytes derived (HKDF-SHA256) from the text of the variable or file."""

    material: bytes
    source: str  # "HERMES_SECRET_KEY" or the key file's path: where to look, never the key itself
    shared: bool  # from the environment: the same on every replica that sets it alike

    @property
    def id(self) -> str:
        return hashlib.sha256(b"hermes-hub key id\0" + self.material).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"SecretKey(id={self.id!r}, source={self.source!r})"

    @classmethod
    def from_text(cls, text: str, source: str, shared: bool) -> SecretKey:
        text = text.strip()
        if len(text) < MIN_KEY_CHARS:
            raise VaultError(f"{source} holds {len(text)} characters; a secret key needs at least "
                             f"{MIN_KEY_CHARS} random ones: make one with {_MAKE_KEY}")
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO)
        return cls(hkdf.derive(text.encode()), source, shared)


def key_file(storage_url: str, env: dict[str, str] | None = None) -> Path:
    """Where the key file lives: beside an SQLite file, else in the data directory."""
    if not is_postgres(storage_url):
        try:
            return sqlite_path(storage_url)[0].parent / KEY_FILE
        except HubError:
            pass
    return default_data_dir(env) / KEY_FILE


def load_key(storage_url: str, *, env: dict[str, str] | None = None) -> SecretKey:
    """The hub's key: ``HERMES_SECRET_KEY``, else the key file (created with mode 0600 on first use)."""
    env = dict(os.environ) if env is None else env
    if env.get(KEY_ENV):
        return SecretKey.from_text(env[KEY_ENV], KEY_ENV, shared=True)
    path = key_file(storage_url, env)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if os.name == "posix" and mode & 0o077:
            raise VaultError(f"the key file {path} can be read by other users (mode {mode:o}): "
                             f"run `chmod 600 {path}`") from None
        return SecretKey.from_text(path.read_text(), str(path), shared=False)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(48) + "\n")
    return SecretKey.from_text(path.read_text(), str(path), shared=False)


def load_hub_key(storage_url: str | None, base_dir: Path | None = None, *, env: dict[str, str] | None = None,
                 ) -> SecretKey:
    """``load_key`` for a hub.json's ``storage.url`` (None: the default store): a relative SQLite path is
    resolved against ``base_dir`` (hub.json's folder) as the store resolves it, so the key file lies beside
    the store whichever folder the hub, or a command, was started in."""
    url = storage_url or default_url(env)
    if not is_postgres(url):
        try:
            url = f"sqlite:///{sqlite_path(url, base_dir)[0]}"
        except HubError:
            pass
    return load_key(url, env=env)


@dataclass(frozen=True)
class SealedName:
    """A secret's place, without its value: what listings show."""

    user_id: str
    kind: str
    name: str
    updated_at: datetime


class Vault:
    """Seals and opens the values of one store under one key."""

    def __init__(self, store: SealedStore, key: SecretKey) -> None:
        self._store = store
        self._aead = AESGCM(key.material)
        self.key = key

    @property
    def store(self) -> SealedStore:
        return self._store

    async def put(self, user_id: str, kind: str, name: str, value: str, *, limit: int = MAX_VALUE_BYTES) -> None:
        """Seal ``value``; ``limit`` (bytes) is raised only for values bounded elsewhere (a masked result)."""
        data = value.encode()
        if len(data) > limit:
            raise VaultError(f"the {kind} {name!r} is {len(data):,} bytes; at most {limit:,} can be kept")
        nonce = os.urandom(_NONCE)
        sealed = nonce + self._aead.encrypt(nonce, data, _bound(user_id, kind, name))
        await self._store.put_sealed(SealedRecord(user_id, kind, name, self.key.id, sealed, utcnow()))

    async def get(self, user_id: str, kind: str, name: str) -> str | None:
        rec = await self._store.get_sealed(user_id, kind, name)
        return None if rec is None else self.open(rec)

    def open(self, rec: SealedRecord) -> str:
        what = f"the {rec.kind} {rec.name!r} of user {rec.user_id!r}"
        if rec.key_id != self.key.id:
            advice = ("every replica needs the same HERMES_SECRET_KEY" if self.key.shared else
                      f"this hub's key comes from {self.key.source}; a hub on a shared database needs "
                      f"{KEY_ENV} set to the same value on every replica")
            raise VaultError(f"{what} was sealed with key {rec.key_id}, but this hub holds key {self.key.id}: "
                             f"{advice} (or set the value again here)")
        try:
            return self._aead.decrypt(rec.sealed[:_NONCE], rec.sealed[_NONCE:],
                                      _bound(rec.user_id, rec.kind, rec.name)).decode()
        except InvalidTag:
            raise VaultError(f"{what} does not open under this hub's key (damaged, or copied from another row): "
                             "set it again") from None

    async def delete(self, user_id: str, kind: str, name: str) -> bool:
        return await self._store.delete_sealed(user_id, kind, name)

    async def names(self, user_id: str | None = None, kind: str | None = None) -> list[SealedName]:
        return [SealedName(r.user_id, r.kind, r.name, r.updated_at)
                for r in await self._store.list_sealed(user_id, kind)]


def _bound(user_id: str, kind: str, name: str) -> bytes:
    return b"\0".join((_INFO, user_id.encode(), kind.encode(), name.encode()))
