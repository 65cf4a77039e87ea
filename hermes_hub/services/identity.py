"""Who is calling: the local user on stdio, the owner of a bearer token on HTTP.

    token = new_token()                         # shown once; only token_hash(token) is stored
    authenticator = Authenticator(store, config_tokens)
    identity = await authenticator.identify(token)
    role = await authenticator.role_now("alice")  # what her live tokens give today (None: none is live)

The upstream turns the caller into the ``Identity`` of each request's ``CallContext`` (see
``hermes_hub.infra.call``), so built-in tools and the audit never guess.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from hermes_hub.infra.call import ADMIN, USER, Identity
from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import TokenRecord, utcnow

TOKEN_PREFIX = "hh_"
MAX_TOKEN_CHARS = 512  # longer than any token this hub makes or accepts in hub.json: refused unread
IDENTITY_KEY = "hermes_identity"  # where the HTTP auth middleware leaves the caller in the ASGI scope state
__all__ = ["ADMIN", "IDENTITY_KEY", "MAX_TOKEN_CHARS", "USER", "Authenticator", "Identity", "StaticToken", "create_token", "local_user_name",
           "new_token", "token_hash"]


def local_user_name() -> str:
    """The OS user running the hub: the identity of stdio callers unless ``auth.local_user`` says otherwise."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "local")


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class StaticToken:
    """A token written in hub.json (usually as ``${ENV}``) rather than created with ``hermes-hub token``."""

    token: str
    user: str
    role: str = USER


class Authenticator:
    """Checks bearer tokens against hub.json's tokens and the store's (hashed) tokens."""

    def __init__(self, store: Store | None, static: Iterable[StaticToken] = ()) -> None:
        self._store = store
        self.use_static(static)

    def use_static(self, static: Iterable[StaticToken]) -> None:
        """hub.json's tokens, at start and after each reload: one taken out there opens nothing any more."""
        self._static = {token_hash(t.token): t for t in static}

    async def role_now(self, user_id: str, *, external: bool = False) -> str | None:
        """The role ``user_id``'s live hub tokens give today, whatever made them (hub.json or ``hermes-hub token
        create``): admin when one of them says admin, else user; None when none is live (every one revoked,
        or the user removed). An OAuth sign-in and a schedule act with no more than this.

        ``external``: the hub also takes an identity provider's JWTs (``auth.issuer``), whose users it cannot
        look up; one who never had a hub token is such a user, a plain user (one whose tokens were all
        revoked stays None)."""
        roles = {t.role for t in self._static.values() if t.user == user_id}
        if ADMIN not in roles and self._store is not None:
            stored = await self._store.list_tokens(user_id)
            roles |= {t.role for t in stored if t.revoked_at is None}
            if external and not roles and not stored:
                return USER
        return None if not roles else ADMIN if ADMIN in roles else USER

    async def enabled(self) -> bool:
        """True when any token exists: then HTTP callers must present one."""
        if self._static:
            return True
        return self._store is not None and any(t.revoked_at is None for t in await self._store.list_tokens())

    async def identify(self, token: str) -> Identity | None:
        if len(token) > MAX_TOKEN_CHARS:
            return None
        return await self.identify_hash(token_hash(token))

    async def identify_hash(self, digest: str) -> Identity | None:
        """The owner of the live token whose ``token_hash`` is ``digest`` (a status-page login keeps only that)."""
        for known, static in self._static.items():
            if hmac.compare_digest(known, digest):
                return Identity(static.user, static.role)
        if self._store is not None:
            row = await self._store.find_token(digest)
            if row is not None:
                return Identity(row.user_id, row.role)
        return None


async def create_token(store: Store, user: str, role: str = USER, name: str = "") -> tuple[str, TokenRecord]:
    """Create and store a token; return it (shown once, never stored) and its record."""
    if role not in (USER, ADMIN):
        raise InvalidInput(f"role must be '{USER}' or '{ADMIN}' (got {role!r})")
    if not user.strip():
        raise InvalidInput("the user name must not be empty")
    token = new_token()
    record = TokenRecord(id="tok_" + secrets.token_urlsafe(6), token_hash=token_hash(token), user_id=user.strip(),
                         role=role, name=name, created_at=utcnow())
    await store.add_token(record)
    return token, record
