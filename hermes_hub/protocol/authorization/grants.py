"""Grants: what a person approved on the consent page, and the secrets issued under it.

    request_id = await grants.open_request(client_id, params)      # /authorize, before consent
    redirect = await grants.approve(request_id, identity, "Claude")  # the consent page's Approve
    tokens = await grants.exchange_code(code)                       # /token, once per code
    found = await grants.check(access_token)                        # every /mcp request

Every secret (pending request id, code, access and refresh token) is kept as its SHA-256 only, in the
store every replica shares, so revoking a grant (``hermes-hub token revoke``, here or on another
replica) ends its tokens on their next request everywhere. A code works once: presenting it again
revokes the grant it opened (RFC 6749 §10.5). Refresh tokens rotate: each works once, and one
presented again (a stolen copy, or the original after the thief used it) revokes the grant too.

A grant stands only while its person does (``standing``, on every access-token check and every
refresh): it acts with no more than the role their live hub tokens give today (an admin demoted to a
user loses ``admin`` on the next call), it opens nothing and refreshes no more once they have no live
hub token (all revoked, or taken out of hub.json), and it ends ``lifetime`` after the consent
(``auth.grant_lifetime_days``), however often it was refreshed.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hermes_hub.infra.call import ADMIN, USER, Identity
from hermes_hub.services.identity import token_hash
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord, utcnow

ACCESS_PREFIX, REFRESH_PREFIX = "hha_", "hhr_"
ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)
CODE_LIFETIME = timedelta(minutes=5)
REQUEST_LIFETIME = timedelta(minutes=10)  # time a person has to approve on the consent page
SCOPES = ("mcp", "admin")  # mcp: use the hub as yourself; admin: also an admin's rights, if you are one
DEFAULT_SCOPES = ("mcp",)
GRANT_LIFETIME = timedelta(days=90)  # auth.grant_lifetime_days: from the consent, refreshes or not
RoleNow = Callable[[str], Awaitable[str | None]]  # a user's role from their live hub tokens; None: none is live


class GrantRefused(Exception):
    """A code, refresh token or request that cannot be used; ``str()`` says why and what to do."""


@dataclass(frozen=True)
class Issued:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: list[str]


@dataclass(frozen=True)
class Access:
    """A live access token: whose it is, and the endpoint (path) it opens."""

    identity: Identity
    grant_id: str
    client_id: str
    resource: str
    scopes: list[str]
    expires_at: datetime


async def _as_approved(user_id: str) -> str | None:  # a ``Grants`` given no ``role_now``: the approved role holds
    return ADMIN


def _days(lifetime: timedelta) -> str:
    days = lifetime.total_seconds() / 86400
    return f"{days:g} day{'s' * (days != 1)}"


class Grants:
    def __init__(self, store: Store, role_now: RoleNow = _as_approved, lifetime: timedelta = GRANT_LIFETIME) -> None:
        self.store, self.role_now, self.lifetime = store, role_now, lifetime

    def ends_at(self, grant: OAuthGrantRecord) -> datetime:
        return grant.created_at + self.lifetime

    async def standing(self, grant: OAuthGrantRecord) -> tuple[Identity, list[str]] | str:
        """Who ``grant`` acts as now and with which scopes (capped at its person's role today), or why it
        opens nothing any more (for the 401's description and the token endpoint's ``invalid_grant``)."""
        if grant.revoked_at is not None:
            return "this sign-in was revoked; sign in again"
        if utcnow() >= self.ends_at(grant):
            return (f"this sign-in ended: sign-ins last {_days(self.lifetime)} from the consent "
                    f"(auth.grant_lifetime_days), however often they are refreshed; sign in again from your MCP host")
        role = await self.role_now(grant.user_id)
        if role is None:
            return (f"this sign-in ended: {grant.user_id} has no live hub token any more (revoked, or taken out of "
                    f"hub.json); an admin creates one with `hermes-hub token create {grant.user_id}`, then sign in "
                    f"again")
        admin = grant.role == ADMIN and role == ADMIN
        scopes = [s for s in grant.scopes.split() if s != "admin" or admin]
        return Identity(grant.user_id, ADMIN if admin else USER), scopes

    async def _put(self, kind: str, secret: str, grant_id: str | None, client_id: str, data: dict[str, Any],
                   lifetime: timedelta) -> None:
        now = utcnow()
        await self.store.add_oauth_token(OAuthTokenRecord(token_hash(secret), kind, grant_id, client_id,
                                                          json.dumps(data), now, now + lifetime))

    # --- before consent -----------------------------------------------------------------------------

    async def open_request(self, client_id: str, params: dict[str, Any]) -> str:
        """Keep an authorization request until the person decides; return its id (for the consent URL)."""
        await self.store.prune_oauth_tokens(expired_before=utcnow())
        request_id = secrets.token_urlsafe(24)
        await self._put("request", request_id, None, client_id, params, REQUEST_LIFETIME)
        return request_id

    async def pending(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        """(client id, parameters) of a live, undecided request, or None."""
        found = await self.store.find_oauth_token(token_hash(request_id)) if len(request_id) <= 64 else None
        if found is None:
            return None
        row, _ = found
        if row.kind != "request" or row.used_at is not None or row.expires_at < utcnow():
            return None
        return row.client_id, json.loads(row.data)

    async def decide(self, request_id: str) -> tuple[str, dict[str, Any]]:
        """Spend a pending request (a decision is made once); its client id and parameters."""
        found = await self.pending(request_id)
        if found is None or not await self.store.spend_oauth_token(token_hash(request_id), at=utcnow()):
            raise GrantRefused("this sign-in request has expired or was already answered; start the sign-in "
                               "again from your MCP host")
        return found

    async def approve(self, request_id: str, identity: Identity, client_name: str) -> tuple[str, dict[str, Any]]:
        """Make the grant for the person who approved; return (the code, the request's parameters)."""
        client_id, params = await self.decide(request_id)
        scopes = [s for s in params["scopes"] if s != "admin" or identity.is_admin]
        grant = OAuthGrantRecord("oag_" + secrets.token_urlsafe(6), identity.user_id,
                                 ADMIN if "admin" in scopes else USER, client_id, client_name[:200],
                                 params["resource"], " ".join(scopes), utcnow())
        await self.store.add_oauth_grant(grant)
        code = secrets.token_urlsafe(32)
        await self._put("code", code, grant.id, client_id, {**params, "scopes": scopes}, CODE_LIFETIME)
        return code, params

    # --- the token endpoint -------------------------------------------------------------------------

    async def load(self, secret: str, kind: str, client_id: str) -> tuple[OAuthTokenRecord, OAuthGrantRecord] | None:
        """A code's or refresh token's row and live grant, spent or not; None if unknown or the grant ended."""
        found = await self.store.find_oauth_token(token_hash(secret)) if len(secret) <= 512 else None
        if found is None:
            return None
        row, grant = found
        if row.kind != kind or row.client_id != client_id or grant is None or grant.revoked_at is not None:
            return None
        return row, grant

    async def spend(self, secret: str, grant: OAuthGrantRecord, what: str) -> None:
        """Spend a code or refresh token; a second use revokes its grant and says so."""
        if not await self.store.spend_oauth_token(token_hash(secret), at=utcnow()):
            await self.revoke(grant.id)
            raise GrantRefused(f"this {what} was already used; for safety every token it issued is now revoked. "
                               f"Sign in again from your MCP host")

    async def issue(self, grant: OAuthGrantRecord, scopes: list[str]) -> Issued:
        """A new access and refresh token pair for ``grant``, neither living past the grant's end."""
        access, refresh = ACCESS_PREFIX + secrets.token_urlsafe(32), REFRESH_PREFIX + secrets.token_urlsafe(32)
        left = max(self.ends_at(grant) - utcnow(), timedelta(0))
        access_life, refresh_life = min(ACCESS_LIFETIME, left), min(REFRESH_LIFETIME, left)
        await self._put("access", access, grant.id, grant.client_id, {}, access_life)
        await self._put("refresh", refresh, grant.id, grant.client_id, {}, refresh_life)
        return Issued(access, refresh, int(access_life.total_seconds()), scopes)

    async def revoke(self, grant_id: str) -> bool:
        return await self.store.revoke_oauth_grant(grant_id, at=utcnow())

    # --- every request ------------------------------------------------------------------------------

    async def check(self, token: str) -> Access | str:
        """The access behind ``token``, or why it opens nothing (for the 401's description)."""
        found = await self.store.find_oauth_token(token_hash(token)) if len(token) <= 512 else None
        if found is None or found[0].kind != "access" or found[1] is None:
            return "invalid or revoked token"
        row, grant = found
        if grant.revoked_at is not None:
            return "this sign-in was revoked; sign in again"
        if row.expires_at < utcnow() and utcnow() < self.ends_at(grant):
            return "access token expired; refresh it or sign in again"
        standing = await self.standing(grant)
        if isinstance(standing, str):
            return standing
        identity, scopes = standing
        return Access(identity, grant.id, grant.client_id, grant.resource, scopes, row.expires_at)
