"""Streamable HTTP: the hub's server at /mcp, each toolset's at /mcp/<name>, next to /healthz (alive),
/readyz (servers settled) and the status page at /status (``hermes_hub.app.web``), where ``/`` leads."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Mount, Route

from hermes_hub.protocol.authorization.routes import OAUTH_OFF, oauth_off_routes, oauth_routes
from hermes_hub.protocol.authorization.idp import MAX_JWT_CHARS
from hermes_hub.protocol.authorization.service import Authorization
from hermes_hub.protocol.authorization.verifier import Verdict
from hermes_hub.services.identity import MAX_TOKEN_CHARS
from hermes_hub.app.hub.status import readiness
from hermes_hub.infra.throttle import Throttle
from hermes_hub.protocol.upstream.affinity import UnknownSession
from hermes_hub.protocol.upstream.auth import BearerAuth
from hermes_hub.protocol.upstream.exposure import Exposure, HostCheck
from hermes_hub.protocol.upstream.gate import JsonRpcGate
from hermes_hub.protocol.upstream.http_lane import HttpLane
from hermes_hub.protocol.upstream.limit_status import LimitStatus
from hermes_hub.protocol.upstream.ownership import SessionOwner
from hermes_hub.app.web import status_routes
from hermes_hub.app.web.followers import Followers
from hermes_hub.app.web.telemetry import telemetry_routes

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

log = logging.getLogger("hermes_hub.serve")


def build_app(hub: Hub, exposure: Exposure) -> Starlette:
    """A Starlette app whose lifespan owns ``hub``: entering the app starts every downstream."""
    # HostCheck guards every path against DNS rebinding, on every bind; the SDK's own check knows
    # only 127.0.0.1, localhost and ::1 and would refuse the names in hub.allowed_hosts.
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = hub.server.streamable_http_app(streamable_http_path="/mcp", transport_security=unchecked)
    toolset_routes = [route for name, ep in hub.endpoints.items() if name is not None
                      for route in ep.server.streamable_http_app(streamable_http_path=ep.path,
                                                                 transport_security=unchecked).routes]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with hub, contextlib.AsyncExitStack() as stack:  # a mounted app's own lifespan never runs
            for ep in hub.endpoints.values():
                await stack.enter_async_context(ep.server.session_manager.run())
            yield

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    async def front(request: Request) -> RedirectResponse:
        return RedirectResponse("/status", status_code=302)  # the front door; the page's own sign-in applies

    async def readyz(request: Request) -> JSONResponse:
        answer = readiness(hub.pool)  # open to anyone: states only, no error text (see its docstring)
        return JSONResponse(answer, status_code=200 if answer["ready"] else 503)

    throttle = Throttle()  # wrong tokens, counted across /mcp and the status page
    followers = Followers()  # live streams per user, counted across /events and /status/stream
    cfg = hub.config
    if exposure.required:
        oauth = oauth_routes(lambda: _authorization(hub), [ep.path for ep in hub.endpoints.values()],
                             public_url=cfg.hub.public_url, issuer=cfg.auth.issuer, name=cfg.hub.name)
    else:  # nothing to sign in to: advertising OAuth would start a sign-in nobody can finish (Codex)
        oauth = oauth_off_routes()
        log.info("%s", OAUTH_OFF)
    app = Starlette(
        routes=[Route("/", front, methods=["GET"]), Route("/healthz", healthz), Route("/readyz", readyz),
                *status_routes(hub, exposure, throttle, followers), *oauth,
                *telemetry_routes(hub, exposure, throttle, followers),
                *toolset_routes, Mount("/", app=mcp_app)],
        lifespan=lifespan,
    )
    # The hub's authenticator exists once its store is open (in the lifespan); look it up per request.
    app.add_middleware(SessionOwner)  # added first, inside UnknownSession: a session answers only its opener
    app.add_middleware(UnknownSession)  # innermost: a 404 for an unknown Mcp-Session-Id says to reconnect
    app.add_middleware(HttpLane, endpoints=hub.endpoints)  # inside the gate: a plain 2026 call skips the SDK's app
    app.add_middleware(LimitStatus)  # a limit with http_429 answers 2026 HTTP hosts 429, on both paths
    app.add_middleware(JsonRpcGate)  # inside auth: an unknown caller's body is never read
    app.add_middleware(BearerAuth, authenticator=_Deferred(hub), local=hub.local, required=exposure.required,
                       throttle=throttle, public_url=cfg.hub.public_url)
    app.add_middleware(HostCheck, exposure=exposure)  # outermost: a rebound name learns nothing
    return app


def _authorization(hub: Hub) -> Authorization:
    found = hub.services.authorization  # HubError until the hub has started
    assert found is not None
    return found


class _Deferred:
    """The hub's current verifier (hub tokens, OAuth, an identity provider's JWTs), resolved per request."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self.max_chars = MAX_JWT_CHARS if hub.config.auth.issuer else MAX_TOKEN_CHARS

    async def enabled(self) -> bool:
        return await _authorization(self._hub).verifier.enabled()

    async def verify(self, token: str, path: str) -> Verdict:
        return await _authorization(self._hub).verifier.verify(token, path)
