"""The MCP SDK's authorization-server provider protocol over the hub's ``Grants`` and ``Clients``: the
SDK's handlers (``mcp.server.auth.handlers``) parse and check each request, this decides.

``/authorize`` keeps the request and sends the browser to the consent page (``/status/authorize/ID``,
served by ``hermes_hub.app.web``); the code is made there when the person approves. The ``resource``
(RFC 8707) must name one of this hub's endpoints (``/mcp`` or ``/mcp/<toolset>``) at this hub's own
origin; the tokens then open that endpoint only. Without ``resource`` they open ``/mcp``.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from hermes_hub.protocol.authorization.bounds import MAX_PENDING, parameter_problem
from hermes_hub.protocol.authorization.clients import Clients
from hermes_hub.protocol.authorization.grants import DEFAULT_SCOPES, GrantRefused, Grants
from hermes_hub.infra.storage.records import utcnow

CONSENT_PATH = "/status/authorize"
# The origin the request being handled was sent to (hub.public_url, else its own Host): where the
# consent page is, and the only origin a ``resource`` may name.
ORIGIN: contextvars.ContextVar[str] = contextvars.ContextVar("hermes_oauth_origin")


class HubCode(AuthorizationCode):
    grant_id: str


class HubRefresh(RefreshToken):
    grant_id: str


class HubAccess(AccessToken):
    grant_id: str


class HubProvider:
    """``OAuthAuthorizationServerProvider`` for the hub's own endpoints (``paths``)."""

    def __init__(self, grants: Grants, clients: Clients, paths: Iterable[str]) -> None:
        self.grants, self.clients, self.paths = grants, clients, set(paths)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return await self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        await self.clients.register(client_info)

    def resource_path(self, resource: str | None) -> str:
        """The endpoint path ``resource`` names, or ``AuthorizeError(invalid_target)`` saying which exist."""
        if resource is None:
            return "/mcp"
        origin = ORIGIN.get()
        try:
            parts = urlsplit(resource)
            given = f"{parts.scheme}://{parts.netloc}"
            path = parts.path.rstrip("/") or "/"
        except ValueError:
            given, path = "", ""
        if given.lower() != origin.lower() or path not in self.paths:
            known = ", ".join(origin + p for p in sorted(self.paths))
            raise AuthorizeError("invalid_target", f"resource {resource[:200]!r} is not an endpoint of this hub; "
                                                   f"use one of: {known}")
        return path

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if problem := parameter_problem({"state": params.state, "scope": " ".join(params.scopes or []),
                                         "code_challenge": params.code_challenge, "resource": params.resource,
                                         "redirect_uri": str(params.redirect_uri)}):
            raise AuthorizeError("invalid_request", f"{problem}; this hub keeps nothing longer, so send it shorter")
        path = self.resource_path(params.resource)
        kept = {"state": params.state, "scopes": params.scopes or list(DEFAULT_SCOPES),
                "code_challenge": params.code_challenge, "redirect_uri": str(params.redirect_uri),
                "explicit": params.redirect_uri_provided_explicitly, "resource": path,
                "resource_url": params.resource or ORIGIN.get() + path}
        if (await self.grants.store.oauth_counts(at=utcnow()))["requests"] >= MAX_PENDING:
            raise AuthorizeError("temporarily_unavailable", f"this hub already holds {MAX_PENDING} sign-in requests "
                                 f"waiting for consent, the most it keeps; each expires within 10 minutes, so try "
                                 f"again in a few minutes")
        request_id = await self.grants.open_request(client.client_id, kept)
        return f"{ORIGIN.get()}{CONSENT_PATH}/{request_id}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> HubCode | None:
        found = await self.grants.load(authorization_code, "code", client.client_id)
        if found is None:
            return None
        row, grant = found
        if row.used_at is not None:  # a replay: end the sign-in now, whatever the rest of the request says
            await self.grants.revoke(grant.id)
        data = json.loads(row.data)
        return HubCode(code=authorization_code, scopes=data["scopes"], expires_at=row.expires_at.timestamp(),
                       client_id=row.client_id, code_challenge=data["code_challenge"],
                       redirect_uri=data["redirect_uri"], redirect_uri_provided_explicitly=data["explicit"],
                       resource=data["resource_url"], subject=grant.user_id, grant_id=grant.id)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: HubCode) -> OAuthToken:
        return await self._exchange(authorization_code.grant_id, authorization_code.code, "authorization code")

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> HubRefresh | None:
        found = await self.grants.load(refresh_token, "refresh", client.client_id)
        if found is None:
            return None
        row, grant = found
        return HubRefresh(token=refresh_token, client_id=row.client_id, scopes=grant.scopes.split(),
                          expires_at=int(row.expires_at.timestamp()), subject=grant.user_id, grant_id=grant.id)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: HubRefresh,
                                     scopes: list[str]) -> OAuthToken:
        return await self._exchange(refresh_token.grant_id, refresh_token.token, "refresh token")

    async def _exchange(self, grant_id: str, secret: str, what: str) -> OAuthToken:
        """Spend a code or refresh token of a grant that still stands (a second use revokes it) for a new
        token pair, with no more than its person's role today (``Grants.standing``)."""
        grant = await self.grants.store.find_oauth_grant(grant_id)
        try:
            if grant is None:
                raise GrantRefused("this sign-in was revoked; sign in again")
            standing = await self.grants.standing(grant)
            if isinstance(standing, str) and grant.revoked_at is None:
                raise GrantRefused(standing)
            await self.grants.spend(secret, grant, what)  # a replay says so, even of a grant it just revoked
            if isinstance(standing, str):
                raise GrantRefused(standing)
        except GrantRefused as e:
            raise TokenError("invalid_grant", str(e)) from None
        issued = await self.grants.issue(grant, standing[1])
        return OAuthToken(access_token=issued.access_token, token_type="Bearer", expires_in=issued.expires_in,
                          refresh_token=issued.refresh_token, scope=" ".join(issued.scopes) or None)

    async def load_access_token(self, token: str) -> HubAccess | None:
        found = await self.grants.check(token)
        if isinstance(found, str):
            return None
        return HubAccess(token=token, client_id=found.client_id, scopes=found.scopes,
                         expires_at=int(found.expires_at.timestamp()), resource=found.resource,
                         subject=found.identity.user_id, grant_id=found.grant_id)

    async def revoke_token(self, token: HubAccess | HubRefresh) -> None:
        await self.grants.revoke(token.grant_id)  # the whole sign-in: its access and refresh tokens alike

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull, params: object) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "this hub does not accept identity assertions")

