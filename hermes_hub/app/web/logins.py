"""The status page's login sessions, kept in the store: the browser holds a random id, never the token.

    session_id, identity = await logins.open(token)   # None for a wrong token
    identity = await logins.identify(session_id)      # None once it expired, was closed, or its token revoked
    await logins.close(session_id)

The store keeps the SHA-256 of the id and of the token it was opened with, so a copy of the database
opens no session, and every replica sharing the store knows every login (and survives a restart).
Each use re-checks the token: ``hermes-hub token revoke`` (here or on another replica), or a token
removed from hub.json, ends its sessions on their next request.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from hermes_hub.infra.call import Identity
from hermes_hub.services.identity import token_hash
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import LoginRecord, utcnow

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

IDLE = timedelta(hours=12)
LIFETIME = timedelta(days=7)
TOUCH_EVERY = timedelta(minutes=1)  # the page polls every few seconds: one write a minute, not one a poll


class Logins:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def _store(self) -> Store:
        return self.hub.store  # HubError until the hub has started

    async def open(self, token: str) -> tuple[str, Identity] | None:
        """A new session for the owner of ``token``: its id (for the cookie) and who it stands for."""
        identity = await self.hub.authenticator.identify(token)
        if identity is None:
            return None
        store, now = self._store(), utcnow()
        await store.prune_logins(seen_before=now - IDLE, created_before=now - LIFETIME)
        session_id = secrets.token_urlsafe(32)
        await store.add_login(LoginRecord(token_hash(session_id), token_hash(token), identity.user_id, now, now))
        return session_id, identity

    async def identify(self, session_id: str) -> Identity | None:
        store, digest, now = self._store(), token_hash(session_id), utcnow()
        found = await store.find_login(digest)
        if found is None:
            return None
        identity = None
        if found.seen_at > now - IDLE and found.created_at > now - LIFETIME:
            identity = await self.hub.authenticator.identify_hash(found.token_hash)
        if identity is None:  # expired, or its token was revoked: the session is over for good
            await store.delete_login(digest)
            return None
        if now - found.seen_at > TOUCH_EVERY:
            await store.touch_login(digest, at=now)
        return identity

    async def close(self, session_id: str) -> None:
        await self._store().delete_login(token_hash(session_id))
