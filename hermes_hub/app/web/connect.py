"""The status page's **Connect**: sign the hub in to an OAuth-protected server through the served hub.

    POST /status/servers/{name}/connect     (CSRF) -> 303 to the server's authorization page
    GET  /status/oauth/callback/{name}       where the authorization server sends the browser back

The flow is the one ``hermes-hub login`` runs (``downstream.signin``), with the hub's own callback URL as
its redirect. The Connect request keeps the flow running after its 303 has been sent (an ASGI app may go
on after its response), bounded by ``PATIENCE``. A callback is taken only with the ``state`` of a flow
this replica started, from the same status-page user who pressed Connect. A shared server's grant acts
for every user, so only an admin may connect it; on a ``per_user`` server any logged-in user connects
their own account (the grant is stored under them). Codes are never logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.shared.auth import AuthorizationCodeResult
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.downstream.signin import sign_in
from hermes_hub.infra.errors import HubError
from hermes_hub.app.web.access import Access

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

log = logging.getLogger("hermes_hub.app.web")
PATIENCE = 300.0  # seconds a person has to finish signing in after pressing Connect
URL_SECONDS = 20.0  # discovery and registration, before the browser can be sent anywhere
MAX_PENDING = 32


@dataclass
class _Flow:
    server: str
    user: str  # the status-page user who pressed Connect: only they may complete it
    owner: str = ""  # whose grant it becomes: "" the hub's (shared), else that user's (``per_user`` servers)
    url: str | None = None
    state: str | None = None
    ready: anyio.Event = field(default_factory=anyio.Event)
    came_back: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    result: AuthorizationCodeResult | None = None
    error: str | None = None


def _message(text: str, status: int) -> Response:
    from html import escape

    return HTMLResponse(f"<!doctype html><meta charset=utf-8><title>hermes-hub</title><p>{escape(text)}</p>"
                        f"<p><a href=\"/status\">Back to the status page</a></p>", status_code=status,
                        headers={"cache-control": "no-store"})


class _CallbackQueryHidden(logging.Filter):
    """uvicorn's access log writes each path with its query: a callback's carries the code. Keep the path."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and str(args[2]).startswith(CALLBACK):
            record.args = (*args[:2], str(args[2]).split("?", 1)[0] + "?…", *args[3:])
        return True


_HIDE = _CallbackQueryHidden()
CALLBACK = "/status/oauth/callback/"


class _Asgi:
    """An ASGI callable as a route's endpoint (a plain function would be taken for a request handler)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _per_user(hub: Hub, name: str) -> bool:
    """A server whose every user signs in with their own account (``per_user``, issue 18 §2)."""
    return bool(getattr(hub.config.mcp_servers.get(name), "per_user", False))


async def _run_flow(hub: Hub, flows: dict[str, _Flow], flow: _Flow, redirect_uri: str) -> None:
    """One sign-in of the hub to ``flow.server``: the URL shown, the code awaited, the grant kept."""
    cfg = hub.config.mcp_servers[flow.server]

    async def show(url: str) -> None:
        flow.url, flow.state = url, parse_qs(urlsplit(url).query).get("state", [None])[0]
        if flow.state:
            flows[flow.state] = flow
        flow.ready.set()

    async def wait() -> AuthorizationCodeResult:
        with anyio.move_on_after(PATIENCE):
            await flow.came_back.wait()
        if flow.result is None:
            raise HubError(flow.error or f"no sign-in came back within {PATIENCE:g}s; press Connect again")
        return flow.result

    try:
        done = await sign_in(hub.grants, flow.server, cfg, user_id=flow.owner, redirect_uri=redirect_uri, open_url=show,
                             wait_code=wait, patience=PATIENCE)
        log.info("status page: %s signed the hub in to %s (%s tools)", flow.user, flow.server, done.tools)
    except HubError as e:
        flow.error = str(e)
    finally:
        flows.pop(flow.state or "", None)
        flow.ready.set()
        flow.done.set()


def connect_routes(hub: Hub, access: Access) -> list[BaseRoute]:
    flows: dict[str, _Flow] = {}  # state -> the flow waiting for it
    logging.getLogger("uvicorn.access").addFilter(_HIDE)  # once: the same filter object is added only once

    async def connect(scope: dict[str, Any], receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        name = request.path_params["name"]
        viewer = await access.viewer(request)
        own = name in hub.pool.connections and _per_user(hub, name)  # each user connects their own account
        if viewer is None:
            response: Response = JSONResponse({"error": "unauthorized"}, status_code=401)
        elif not viewer.admin and not own:  # a shared server's grant acts for every user: the admin's to give
            response = JSONResponse({"error": "forbidden: only admins may connect the hub's shared servers"}, 403)
        elif not await access.may_act(request, viewer):
            response = JSONResponse({"error": "forbidden: missing or wrong CSRF token; reload the page and retry"}, 403)
        elif name not in hub.pool.connections:
            response = _message(f"no running server '{name}'", 404)
        elif len(flows) >= MAX_PENDING:
            response = _message("too many sign-ins are waiting; finish or abandon one first", 429)
        else:
            user = viewer.identity.user_id
            flow = _Flow(name, user, user if own else "")
            redirect_uri = f"{request.url.scheme}://{request.url.netloc}{CALLBACK}{name}"
            async with anyio.create_task_group() as tg:
                tg.start_soon(_run_flow, hub, flows, flow, redirect_uri)
                with anyio.move_on_after(URL_SECONDS):
                    await flow.ready.wait()
                if flow.url and not flow.done.is_set():
                    await RedirectResponse(flow.url, 303)(scope, receive, send)
                    return  # the task group keeps the flow until it ends (the callback, or PATIENCE)
                tg.cancel_scope.cancel()
            response = _message(flow.error or f"'{name}' did not send the hub to a sign-in page within "
                                f"{URL_SECONDS:g}s", 409)
        await response(scope, receive, send)

    async def callback(request: Request) -> Response:
        flow = flows.get(request.query_params.get("state", ""))
        viewer = await access.viewer(request)
        if flow is None or flow.server != request.path_params["name"] or flow.result is not None:
            return _message("This sign-in is not one this hub is waiting for (expired, already used, or started "
                            "on another replica); press Connect again.", 400)
        if viewer is None or viewer.identity.user_id != flow.user:
            return _message("This sign-in was started by another status-page user; log in as them, or press "
                            "Connect yourself.", 403)
        q = request.query_params
        if "error" in q:
            flow.error = f"the authorization server refused the sign-in: {q['error'][:60]}"
            flow.result = None
        elif q.get("code"):
            flow.result = AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))
        flow.came_back.set()
        with anyio.move_on_after(URL_SECONDS + 30):
            await flow.done.wait()
        if flow.error:
            return _message(f"Connecting {flow.server} failed: {flow.error}", 409)
        return RedirectResponse("/status", 303)

    return [Route("/status/servers/{name}/connect", _Asgi(connect), methods=["POST"]),
            Route(CALLBACK + "{name}", callback)]
