"""The hub signed in to an OAuth-protected remote server, without a person at hand.

A running hub never opens a browser: ``GrantAuth`` presents the grant ``hermes-hub login`` (or the
status page's Connect) stored, refreshes its access token before it expires and once when the server
answers 401, and when no grant works it marks the link ``needs_auth`` (the connection goes to
NEEDS_AUTH, saying how to fix it) and waits for a new grant in the vault (``wait_for_grant``).

Built on the SDK's ``OAuthClientProvider`` (``mcp.client.auth``): discovery (RFC 9728, RFC 8414),
registration (CIMD, RFC 7591), PKCE S256 and RFC 8707 ``resource`` are its; the hub adds where the
grant lives and what happens when it is gone. No token, code or verifier is logged or put in a message.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import NoReturn, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthTokenError
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.grants import SHARED, Grant, Grants
from hermes_hub.services.vault import VaultError


class Link(Protocol):
    """What ``GrantAuth`` tells the connection through its transport's ``Link`` (transports.py)."""

    needs_auth: str | None
    grant_seen: str | None
    closed: anyio.Event

log = logging.getLogger("hermes_hub.downstream")
POLL_SECONDS = 2.0  # how often a server in NEEDS_AUTH looks for a new grant in the (shared) store
CLIENT_NAME = "hermes-hub"
_NO_REDIRECT = "http://127.0.0.1/hermes-hub/no-browser"  # a running hub's provider never redirects anyone


def signs_in(cfg: ServerConfig) -> bool:
    """Whether the hub speaks OAuth to this server: a remote one, unless a static Authorization header
    (``headers``) is its credential and no ``auth`` asks for OAuth."""
    if cfg.transport == "stdio":
        return False
    return cfg.auth is not None or not any(k.lower() == "authorization" for k in cfg.headers)


def login_command(name: str, owner: str | None) -> str:
    return f"hermes-hub login {name}" + (f" --user {owner}" if owner else "")


def needs_auth_text(name: str, owner: str | None, why: str) -> str:
    """The error of a server in NEEDS_AUTH: what happened and the fix."""
    return (f"{why}; sign in: run `{login_command(name, owner)}`, or press Connect on the status page "
            f"(a running hub picks the new grant up within {POLL_SECONDS:g}s)")


def with_scopes(url: str, *scopes: str | None) -> str:
    """The authorization URL asking also for ``scopes`` (space-separated lists): the SDK asks only for what the
    server's challenge or metadata names, which would drop hub.json's ``scopes`` and a step-up's."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    asked = next((v for k, v in query if k == "scope"), "")
    union = list(dict.fromkeys(s for group in (asked, *scopes) if group for s in group.split()))
    if not union or union == asked.split():
        return url
    query = [(k, v) for k, v in query if k != "scope"] + [("scope", " ".join(union))]
    return urlunsplit(parts._replace(query=urlencode(query)))


def client_metadata(cfg: ServerConfig, redirect_uri: str) -> OAuthClientMetadata:
    auth = cfg.auth
    secret = auth is not None and auth.client_secret is not None
    return OAuthClientMetadata(
        redirect_uris=[redirect_uri], client_name=CLIENT_NAME,
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret else "none",
        scope=" ".join(auth.scopes) if auth is not None and auth.scopes else None,
    )


def preregistered(cfg: ServerConfig, redirect_uri: str) -> OAuthClientInformationFull | None:
    """The client of ``auth.client_id`` (registered beforehand with the authorization server), if set."""
    auth = cfg.auth
    if auth is None or auth.client_id is None:
        return None
    secret = auth.client_secret.get_secret_value() if auth.client_secret is not None else None
    return OAuthClientInformationFull(
        client_id=auth.client_id, client_secret=secret, redirect_uris=[redirect_uri],  # type: ignore[list-item]
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        grant_types=["authorization_code", "refresh_token"], client_name=CLIENT_NAME,
    )


def provider(cfg: ServerConfig, storage: object, redirect_uri: str, **handlers: object) -> OAuthClientProvider:
    assert cfg.url
    return OAuthClientProvider(
        cfg.url, client_metadata(cfg, redirect_uri), storage,  # type: ignore[arg-type]
        client_metadata_url=cfg.auth.client_metadata_url if cfg.auth else None, **handlers)  # type: ignore[arg-type]


class _SignInNeeded(Exception):
    """The SDK's provider wanted to send a person to the authorization server (a scope step-up)."""


async def _no_person(*_: object) -> NoReturn:
    raise _SignInNeeded


class GrantAuth(httpx2.Auth):
    """``httpx2.Auth`` of a running hub's connection to one server, for one owner (None: shared)."""

    def __init__(self, name: str, cfg: ServerConfig, owner: str | None, grants: Grants, link: Link) -> None:
        self._name, self._cfg, self._owner, self._grants, self._link = name, cfg, owner, grants, link
        self._provider: OAuthClientProvider | None = None
        self._loaded = False

    def _user(self) -> str:
        return self._owner or SHARED

    async def _load(self) -> None:
        loaded = await self._grants.load(self._user(), self._name)
        self._link.grant_seen, self._loaded = loaded.fingerprint, True
        grant = loaded.grant
        if grant is None or grant.tokens is None:
            return
        redirect = str(grant.client.redirect_uris[0]) if grant.client and grant.client.redirect_uris else _NO_REDIRECT
        storage = self._grants.storage(self._user(), self._name, grant, on_tokens=self._expire_at)
        self._provider = provider(self._cfg, storage, redirect, redirect_handler=_no_person,
                                  callback_handler=_no_person)
        self._expire_at(grant)

    def _expire_at(self, grant: Grant) -> None:
        """Refresh before the token expires (the SDK would wait until after), also after a restart."""
        if self._provider is not None:
            self._provider.context.token_expiry_time = grant.refresh_at()

    async def _remember(self, wanted: str | None) -> None:
        """Keep the scopes a step-up asked for with the grant, so the next login asks for them."""
        loaded = await self._grants.load(self._user(), self._name)
        if loaded.grant is not None and wanted:
            await self._grants.save(self._user(), self._name, loaded.grant.model_copy(update={"wanted_scope": wanted}))
            self._link.grant_seen = (await self._grants.load(self._user(), self._name)).fingerprint

    def _signed_out(self, why: str) -> None:
        self._link.needs_auth = needs_auth_text(self._name, self._owner, why)
        self._link.closed.set()  # the connection leaves READY (or its start-up ends) and waits for a grant

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self._loaded:
            await self._load()
        if self._provider is None:
            response = yield request
            if response.status_code == 401:
                self._signed_out(f"server '{self._name}' asks for an OAuth sign-in and the hub holds no grant for it")
            return
        refreshed = False
        while True:
            flow = self._provider.async_auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and response.status_code == 401:
                        break
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            except _SignInNeeded:
                wanted = self._provider.context.client_metadata.scope  # the SDK's union: held + asked for
                await self._remember(wanted)
                self._signed_out(f"server '{self._name}' asks for scopes the hub's grant does not hold ({wanted})")
                return
            except (OAuthFlowError, OAuthTokenError, httpx2.HTTPError) as e:
                log.warning("[%s] OAuth: %s", self._name, type(e).__name__)  # their text may quote a body
                self._signed_out(f"signing in to server '{self._name}' failed ({type(e).__name__})")
                return
            finally:
                await flow.aclose()
            if refreshed or not self._provider.context.can_refresh_token():
                self._signed_out(f"server '{self._name}' refused the hub's access token"
                                 + (" and its refresh" if refreshed else " (no refresh token to renew it)"))
                return
            refreshed = True  # once per request: a 401 may just be an early expiry
            self._provider.context.token_expiry_time = 1.0  # in the past: the next round refreshes first


async def wait_for_grant(grants: Grants, owner: str | None, name: str, seen: str | None) -> None:
    """Return once the vault holds a grant for (owner, server) other than the one that failed (``seen``).
    Bounded polling of the store (a login on another machine or replica), woken early by a login here."""
    said = None
    while True:
        try:
            loaded = await grants.load(owner or SHARED, name)
            if loaded.fingerprint not in (None, seen) and loaded.grant is not None and loaded.grant.tokens:
                return
        except VaultError as e:
            if str(e) != said:  # once per distinct reason, not every poll
                said = str(e)
                log.warning("[%s] %s", name, e)
        with anyio.move_on_after(POLL_SECONDS):
            await grants.changed.wait()
