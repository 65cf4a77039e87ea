"""A person signs the hub in to an OAuth-protected server: the authorization-code flow, once.

    grant = await sign_in(grants, "github", cfg, user_id="", redirect_uri=callback.redirect_uri,
                          open_url=show_and_open, wait_code=callback_result)

The SDK's ``OAuthClientProvider`` runs the flow (discovery, CIMD or dynamic registration, PKCE S256,
RFC 8707 ``resource``) when the server first answers 401; ``open_url`` sends the person to the
authorization URL and ``wait_code`` returns what came back to ``redirect_uri``. The flow runs inside a
real MCP handshake and listing, and the grant is stored once tokens were issued. What ``hermes-hub login`` (a loopback
callback) and the status page's Connect (the hub's own callback route) share.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.diagnosis import unwrap
from hermes_hub.downstream.grants import SHARED, Grant, Grants
from hermes_hub.downstream.oauth import preregistered, provider, signs_in, with_scopes
from hermes_hub.infra.errors import HubError

CHECK_SECONDS = 60.0  # the handshake and listing that run the flow and show the grant works


class _Staged:
    """``TokenStorage`` that keeps the flow's registration and tokens until the flow is done."""

    def __init__(self, grant: Grant) -> None:
        self.grant = grant

    async def get_tokens(self) -> OAuthToken | None:
        return None  # a login always asks the person again, whatever is stored

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.grant = self.grant.with_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.grant.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.grant = self.grant.model_copy(update={"client": client_info})


@dataclass(frozen=True)
class SignedIn:
    grant: Grant
    tools: int | None  # what the server lists with the new grant (None: the check did not finish)
    check_error: str | None = None


async def sign_in(grants: Grants, name: str, cfg: ServerConfig, *, user_id: str = SHARED, redirect_uri: str,
                  open_url: Callable[[str], Awaitable[None]],
                  wait_code: Callable[[], Awaitable[AuthorizationCodeResult]], patience: float = 300.0) -> SignedIn:
    """The flow, then the grant stored under (``user_id``, ``name``); ``patience``: the seconds ``wait_code``
    may take (the person), on top of which the server has ``CHECK_SECONDS``."""
    if not signs_in(cfg):
        why = ("a stdio server takes its credentials in 'env'" if cfg.transport == "stdio" else
               "its 'headers' carry a static Authorization header; remove it, or add \"auth\": {\"type\": \"oauth\"}")
        raise HubError(f"server '{name}' does not sign in with OAuth: {why} (mcpServers.{name} in {cfg.config_file})")
    assert cfg.url
    staged = _Staged(Grant(client=preregistered(cfg, redirect_uri)))
    before = (await grants.load(user_id, name)).grant
    extra = (" ".join(cfg.auth.scopes) if cfg.auth and cfg.auth.scopes else None,
             before.wanted_scope if before else None)

    async def send_person(url: str) -> None:
        await open_url(with_scopes(url, *extra))

    auth = _Recorded(provider(cfg, staged, redirect_uri, redirect_handler=send_person, callback_handler=wait_code))
    headers = {k: v for k, v in cfg.headers.items() if k.lower() != "authorization"}
    tools: int | None = None
    async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=httpx2.Timeout(30)) as http:
        transport = sse_client(cfg.url, headers=headers, auth=auth) if cfg.transport == "sse" else (
            streamable_http_client(cfg.url, http_client=http))
        try:
            with anyio.fail_after(patience + CHECK_SECONDS):
                async with Client(transport) as client:
                    tools = len((await client.list_tools()).tools)
        except Exception as e:  # noqa: BLE001 - the flow's own failure, when there was one, says more
            failed = unwrap(auth.error or e)  # the cause, not the task group that carried it
            if isinstance(failed, HubError):  # the person's refusal, or no answer in time
                raise failed from None
            if isinstance(failed, OAuthFlowError | OAuthRegistrationError | OAuthTokenError):
                raise HubError(f"signing in to '{name}' failed: {_plain(failed)}; check mcpServers.{name}.auth in "
                               f"{cfg.config_file}, then run `hermes-hub login {name}` again") from None
            if staged.grant.tokens is None:
                raise HubError(f"cannot sign in to '{name}' at {cfg.url}: {type(failed).__name__}: "
                               f"{str(failed)[:200]}; check mcpServers.{name}.url and that the server is up") from None
            check = f"{type(failed).__name__}: {str(failed)[:200]}"
        else:
            check = None
    if staged.grant.tokens is None:
        raise HubError(f"server '{name}' let the hub in without asking it to sign in, so there is no grant to "
                       f"store; it needs no `hermes-hub login`")
    await grants.save(user_id, name, staged.grant)
    return SignedIn(staged.grant, tools, check)


class _Recorded(httpx2.Auth):
    """The SDK provider's flow, with its failure kept here rather than lost in the transport's task
    (where it would leave the request unanswered): the request then ends with the server's 401."""

    def __init__(self, inner: httpx2.Auth) -> None:
        self._inner = inner
        self.error: Exception | None = None

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self._inner.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as e:  # noqa: BLE001 - reported by sign_in
            self.error = self.error or e
        finally:
            await flow.aclose()


def _plain(e: Exception) -> str:
    """An OAuth error's message without what a server echoed back (a body may quote a code)."""
    text = str(e).split(":", 1)[0] if isinstance(e, OAuthTokenError) else str(e)
    if text.startswith("State parameter mismatch"):  # it quotes both states
        return "the authorization response's state did not match the request's"
    return text[:300]
