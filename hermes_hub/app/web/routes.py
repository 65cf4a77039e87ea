"""The status page's endpoints (every path under /status):

    GET  /status                  the page (a login form until the viewer is known: no data before)
    GET  /status.json             the same data for scripts (Authorization: Bearer, or the login cookie)
    GET  /status/live             the page's changing part, fetched by status.js when something changed
    GET  /status/stream           server-sent ticks from the event bus: something the viewer sees changed
    GET  /status/runs/{run_id}    one of the viewer's agent runs, round by round
    POST /status/login, /status/logout       open a login session (cookie: its id), or end it
    POST /status/servers/{name}/restart, /status/reload     admins only, with the CSRF token
    POST /status/secrets, /status/secrets/delete             the viewer's own secrets (web/secrets.py)
    GET /status/approvals/{id}, POST .../approve, .../deny   the viewer's own pending approvals (web/approvals.py)
    GET/POST /status/authorize/{request_id}   the OAuth consent page (``consent``)
    POST /status/servers/{name}/connect, GET /status/oauth/callback/{name}   OAuth sign-in (web/connect.py)
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from hermes_hub.core.schedules.timing import written
from hermes_hub.infra.errors import HubError, NotFound
from hermes_hub.infra.throttle import Throttle, Throttled
from hermes_hub.app.web import view
from hermes_hub.app.web.access import COOKIE, Access, Viewer, same_origin
from hermes_hub.app.web.activity import sparkline
from hermes_hub.app.web.approvals import approval_routes, approvals_view
from hermes_hub.app.web.connect import connect_routes
from hermes_hub.app.web.consent import consent_routes
from hermes_hub.app.web.followers import Followers
from hermes_hub.app.web.logins import IDLE, LIFETIME
from hermes_hub.app.web.secrets import secret_routes, secrets_view
from hermes_hub.app.web.stream import FALLBACK_SECONDS, stream_routes
from hermes_hub.app.web.unmask import unmask_routes

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub
    from hermes_hub.protocol.upstream.exposure import Exposure

log = logging.getLogger("hermes_hub.app.web")
POLL_SECONDS = 2
Endpoint = Callable[[Request], Awaitable[Response]]
_env = Environment(loader=PackageLoader("hermes_hub.app.web", "templates"), autoescape=select_autoescape(["html"]))
_env.globals.update(sparkline=sparkline, outcomes=view.OUTCOMES, poll_ms=POLL_SECONDS * 1000,
                    fallback_ms=FALLBACK_SECONDS * 1000)
_env.filters["wbr"] = lambda name: Markup("<wbr>").join(  # a name may break after _ or -, never mid-word
    re.split(r"(?<=[_\-])", str(escape(name))))
_env.filters["every"] = written
_env.filters["duration"] = lambda s: (f"{s:.0f}s" if s < 120 else f"{s / 60:.0f} min" if s < 7200
                                      else f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} days")


def _page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(_env.get_template(name).render(**context), status_code=status,
                        headers={"cache-control": "no-store", "x-frame-options": "DENY",
                                 "content-security-policy": "default-src 'self'; img-src 'self' data:; "
                                                            "frame-ancestors 'none'"})


def _limited(endpoint: Endpoint, *, html: bool) -> Endpoint:
    """``endpoint`` answering 429, with Retry-After and when to retry, while its caller's address is throttled."""
    @functools.wraps(endpoint)
    async def guarded(request: Request) -> Response:
        try:
            return await endpoint(request)
        except Throttled as e:
            headers = {"retry-after": str(e.retry_after)}
            if html:
                response = _page("login.html", 429, error=e.sentence, form=False)
                response.headers.update(headers)
                return response
            return JSONResponse({"error": "too_many_requests", "error_description": e.sentence}, 429, headers)
    return guarded


async def _icon(request: Request) -> Response:
    return FileResponse(Path(__file__).parent / "static" / "favicon.ico", media_type="image/x-icon",
                        headers={"Cache-Control": "max-age=86400"})


async def _login_page(access: Access, request: Request, error: str | None = None) -> HTMLResponse:
    """The login form (401), saying why when a login cookie came with the request."""
    if not access.tokens_required:  # no-token mode, reached from another machine (through a proxy?)
        return _page("login.html", 403, error="This hub has no tokens, so only this machine may open its "
                                              "page; open it on the machine the hub runs on.", form=False)
    if error is None and request.cookies.get(COOKIE):
        error = (f"Your login has ended (logged out, idle for {IDLE.total_seconds() / 3600:g} hours, older "
                 f"than {LIFETIME.days} days, or its token was revoked): log in again.")
    response = _page("login.html", 401, error=error, form=True)
    if request.cookies.get(COOKIE):
        response.delete_cookie(COOKIE, path="/status")
    return response


def _session_routes(access: Access) -> list[BaseRoute]:
    """POST /status/login and /status/logout: a login session whose cookie holds its id, never the token."""

    async def login(request: Request) -> Response:
        if not same_origin(request):  # a foreign page must not log this browser into someone's account
            return _page("login.html", 403, error="This login form was sent from another site; open the status "
                                                  "page itself and log in there.", form=False)
        token = str((await request.form()).get("token", "")).strip()
        if not access.tokens_required:
            return RedirectResponse("/status", 303)
        session_id = await access.log_in(request, token)
        if session_id is not None and (old := request.cookies.get(COOKIE)):
            await access.logins.close(old)  # a second login in this browser replaces the first
        if session_id is None:
            return await _login_page(access, request, "That token is not valid (or was revoked). Create one with "
                                         "`hermes-hub token create USER`.")
        response = RedirectResponse("/status", 303)
        # The cookie holds the session's random id, never the token; the store keeps only its hash.
        response.set_cookie(COOKIE, session_id, max_age=int(LIFETIME.total_seconds()), path="/status",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    async def logout(request: Request) -> Response:
        if session_id := request.cookies.get(COOKIE):
            await access.logins.close(session_id)
        response = RedirectResponse("/status", 303)
        response.delete_cookie(COOKIE, path="/status")
        return response

    return [Route("/status/login", _limited(login, html=True), methods=["POST"]),
            Route("/status/logout", logout, methods=["POST"])]


def _admin_routes(hub: Hub, access: Access) -> list[BaseRoute]:
    """POST /status/servers/{name}/restart and /status/reload: admins only, with the CSRF token, audited."""

    async def _act(request: Request, action: Any, what: str, arguments: dict[str, Any]) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if not viewer.admin:
            return JSONResponse({"error": "forbidden: only admins may restart servers or reload hub.json"}, 403)
        if not await access.may_act(request, viewer):
            return JSONResponse({"error": "forbidden: missing or wrong CSRF token; reload the page and retry"}, 403)
        try:
            async with hub.audit_action(viewer.identity, what, arguments):  # who restarted or reloaded, and when
                done = await action()
            log.info("status page: %s by %s", done, viewer.identity.user_id)
        except HubError as e:
            return JSONResponse({"error": str(e)}, status_code=404 if isinstance(e, NotFound) else 409)
        if viewer.by_header or "json" in request.headers.get("accept", ""):
            return JSONResponse(done)
        return RedirectResponse("/status", 303)

    async def restart(request: Request) -> Response:
        name = request.path_params["name"]

        async def go() -> dict[str, Any]:
            await hub.restart(name)
            return {"restarted": name}
        return await _act(request, go, "status_restart", {"server": name})

    async def reload(request: Request) -> Response:
        return await _act(request, hub.reload_file, "status_reload", {})

    return [Route("/status/servers/{name}/restart", _limited(restart, html=False), methods=["POST"]),
            Route("/status/reload", _limited(reload, html=False), methods=["POST"])]


def status_routes(hub: Hub, exposure: Exposure, throttle: Throttle | None = None,
                  followers: Followers | None = None) -> list[BaseRoute]:
    access = Access(hub, exposure, throttle or Throttle())
    followers = followers or Followers()  # the served app shares one with /events

    def _filters(request: Request) -> dict[str, str | None]:
        outcome = request.query_params.get("outcome") or None
        return {"tool": request.query_params.get("tool") or None,
                "outcome": outcome if outcome in view.OUTCOMES else None}

    def _context(viewer: Viewer, data: dict[str, Any]) -> dict[str, Any]:
        return {"d": data, "csrf": access.csrf(viewer) if viewer.admin else None, "colour": view.colour,
                "own_csrf": access.csrf(viewer),  # for what any viewer may do to their own: Connect a per_user server
                "logins": access.tokens_required}  # without tokens there is nothing to log out of

    async def page(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return await _login_page(access, request)
        data = await view.view(hub, viewer.identity, **_filters(request))
        return _page("status.html", **_context(viewer, data), query=request.url.query,
                     secrets=await secrets_view(hub, viewer.identity), secret_csrf=access.csrf(viewer),
                     approvals=await approvals_view(hub, viewer.identity), approval_csrf=access.csrf(viewer))

    async def live(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "log in again"}, status_code=401)
        data = await view.view(hub, viewer.identity, **_filters(request))
        return _page("live.html", **_context(viewer, data))

    async def as_json(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized", "error_description":
                                 "send 'Authorization: Bearer <token>'; create one with `hermes-hub token create USER`"},
                                status_code=401, headers={"www-authenticate": 'Bearer realm="hermes-hub"'})
        data = view.as_json(await view.view(hub, viewer.identity, **_filters(request)))
        if viewer.admin:
            data["csrf"] = access.csrf(viewer)  # for scripts in loopback mode, which send no bearer header
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def run(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return await _login_page(access, request)
        try:
            found = await view.trace(hub, viewer.identity, request.path_params["run_id"])
        except NotFound as e:  # another user's run answers like one that never existed
            return _page("message.html", 404, title="No such run", message=str(e))
        if "json" in request.headers.get("accept", ""):
            return JSONResponse(found)
        return _page("run.html", run=found)

    static = Path(__file__).parent / "static"
    return [
        Route("/status", _limited(page, html=True)), Route("/status.json", _limited(as_json, html=False)),
        Route("/status/live", _limited(live, html=False)), Route("/status/runs/{run_id}", _limited(run, html=True)),
        *_session_routes(access), *_admin_routes(hub, access),
        *connect_routes(hub, access),  # Connect: OAuth sign-in to a server in NEEDS_AUTH
        *secret_routes(hub, access),  # "Your secrets": each viewer's own (web/secrets.py)
        *approval_routes(hub, access, _page),  # "Waiting for your approval": each viewer's own (web/approvals.py)
        *unmask_routes(hub, access, _page),  # a masked result's original, audited (web/unmask.py)
        *stream_routes(hub, access, _limited, followers),  # the live view's ticks from the event bus (web/stream.py)
        Mount("/status/static", StaticFiles(directory=static), name="static"),
        Route("/favicon.ico", _icon),  # browsers ask for it at the root, whatever the page says
        # OAuth sign-in of hosts (hermes_hub.protocol.authorization), off while the hub needs no authentication
        *(consent_routes(hub, access, _page, _limited) if exposure.required else []),
    ]
