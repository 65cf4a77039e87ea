"""OAuth grants the hub holds for remote servers: one per (user, server), sealed in the vault.

A grant is the token set an authorization server issued plus the client registration it was issued to
(``client``: registered dynamically, a CIMD URL, or pre-registered in hub.json), kept as one JSON value
of kind ``oauth`` under the user's id: ``""`` is the hub's own (shared) grant, used by every user of a
server without ``per_user``.

    grants = Grants(lambda: vault)
    await grants.save("", "github", grant)        # what `hermes-hub login github` ends with
    storage = grants.storage("", "github")         # an SDK ``TokenStorage`` over that grant

Nothing here logs or quotes a token; ``Grant.__repr__`` names only what it holds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import BaseModel, ValidationError

from hermes_hub.services.vault import Vault, VaultError

KIND = "oauth"
SHARED = ""  # the user id of the hub's own grant
REFRESH_MARGIN = 60.0  # seconds before expiry an access token is refreshed (at most a tenth of its life)


class Grant(BaseModel):
    """What the vault keeps for one (user, server)."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None
    expires_at: float | None = None  # time.time() the access token expires; None: not said
    wanted_scope: str | None = None  # scopes the server asked for beyond the grant's (a step-up): the next login's

    def __repr__(self) -> str:
        return (f"Grant(tokens={'yes' if self.tokens else 'no'}, refresh={'yes' if self.refreshable else 'no'}, "
                f"client={'yes' if self.client else 'no'}, expires_at={self.expires_at})")

    __str__ = __repr__

    @property
    def refreshable(self) -> bool:
        return bool(self.tokens and self.tokens.refresh_token)

    def with_tokens(self, tokens: OAuthToken) -> Grant:
        expires = None if tokens.expires_in is None else time.time() + tokens.expires_in
        return self.model_copy(update={"tokens": tokens, "expires_at": expires})

    def refresh_at(self) -> float | None:
        """When to refresh: ``REFRESH_MARGIN`` before expiry, or a tenth of the token's life if that is shorter."""
        if self.expires_at is None or self.tokens is None:
            return None
        life = self.tokens.expires_in or REFRESH_MARGIN * 10
        return self.expires_at - min(REFRESH_MARGIN, life / 10)


def fingerprint(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Loaded:
    grant: Grant | None
    fingerprint: str | None  # of the stored value: a new login changes it


class Grants:
    """The hub's OAuth grants over its vault (opened with the store, after this object exists)."""

    def __init__(self, vault: Callable[[], Vault]) -> None:
        self._vault = vault
        self.changed = anyio.Event()  # set (and replaced) when this process saves or forgets a grant

    def _nudge(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def load(self, user_id: str, server: str) -> Loaded:
        text = await self._vault().get(user_id, KIND, server)
        if text is None:
            return Loaded(None, None)
        try:
            return Loaded(Grant.model_validate_json(text), fingerprint(text))
        except ValidationError:
            raise VaultError(f"the OAuth grant for server {server!r} of user {user_id or '(shared)'!r} is not "
                             f"readable: run `hermes-hub login {server}` again") from None

    async def save(self, user_id: str, server: str, grant: Grant) -> None:
        await self._vault().put(user_id, KIND, server, grant.model_dump_json(exclude_none=True))
        self._nudge()

    async def forget(self, user_id: str, server: str) -> bool:
        gone = await self._vault().delete(user_id, KIND, server)
        self._nudge()
        return gone

    async def holders(self, server: str) -> list[str]:
        """The user ids holding a grant for ``server`` (``""``: the shared one)."""
        return sorted(n.user_id for n in await self._vault().names(kind=KIND) if n.name == server)

    def storage(self, user_id: str, server: str, grant: Grant | None,
                on_tokens: Callable[[Grant], None] = lambda g: None) -> VaultTokenStorage:
        return VaultTokenStorage(self, user_id, server, grant, on_tokens)


class VaultTokenStorage:
    """The SDK's ``TokenStorage`` over one grant: reads what was loaded, writes every change through."""

    def __init__(self, grants: Grants, user_id: str, server: str, grant: Grant | None,
                 on_tokens: Callable[[Grant], None]) -> None:
        self._grants, self._user, self._server = grants, user_id, server
        self.grant = grant or Grant()
        self._on_tokens = on_tokens

    async def get_tokens(self) -> OAuthToken | None:
        return self.grant.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.grant = self.grant.with_tokens(tokens)
        await self._grants.save(self._user, self._server, self.grant)
        self._on_tokens(self.grant)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.grant.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.grant = self.grant.model_copy(update={"client": client_info})
        if self.grant.tokens is not None:  # a re-registration of a live grant; a new one is saved with its tokens
            await self._grants.save(self._user, self._server, self.grant)
