"""The consent page of the hub's OAuth (``hermes_hub.protocol.authorization``): a host's sign-in lands here.

    GET  /status/authorize/{request_id}   who asks (client name, redirect URI, endpoint, scopes), and a form
    POST /status/authorize/{request_id}   Approve (with a hub token, or the status page's login) or Deny

The page is under /status so an existing status-page login (its cookie) signs the person in; otherwise
one password field takes their hub token, checked once and not kept. The POST must come from this page
(same origin) and, with a login, carry its CSRF token, so another site can neither approve for a
logged-in browser nor frame the page (``X-Frame-Options: DENY``). Deny needs the same token or login
(and CSRF token) as Approve. Approving sends the browser back to the client's redirect URI with a
code; denying, with ``error=access_denied``. Each request is decided once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.protocol.authorization.grants import GrantRefused
from hermes_hub.protocol.authorization.provider import CONSENT_PATH
from hermes_hub.infra.call import Identity
from hermes_hub.app.web.access import Access, same_origin

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub


def consent_routes(hub: Hub, access: Access, page: Callable[..., Response],
                   limited: Callable[..., Any]) -> list[BaseRoute]:
    def authorization() -> Any:
        found = hub.services.authorization
        assert found is not None
        return found

    async def _render(request: Request, request_id: str, status: int = 200, error: str | None = None) -> Response:
        oauth = authorization()
        pending = await oauth.grants.pending(request_id)
        if pending is None:
            return page("message.html", 400, title="Sign-in expired",
                        message="This sign-in request has expired or was already answered; start the sign-in "
                                "again from your MCP host.")
        client_id, params = pending
        client = await oauth.clients.get(client_id)
        viewer = await access.viewer(request)
        return page("consent.html", status, error=error, request_id=request_id, client_id=client_id,
                    client_name=(client.client_name if client and client.client_name else client_id),
                    redirect_uri=params["redirect_uri"], resource=params["resource_url"], scopes=params["scopes"],
                    user=viewer.identity.user_id if viewer else None, csrf=access.csrf(viewer) if viewer else "")

    async def show(request: Request) -> Response:
        return await _render(request, request.path_params["request_id"])

    async def _who(request: Request, token: str) -> Identity | None:
        if token:
            access.check_throttle(request)
            found = await hub.authenticator.identify(token)
            if found is None:
                access.throttle.failed(request.client.host if request.client else "unknown", "the consent page")
            return found
        viewer = await access.viewer(request)
        return viewer.identity if viewer is not None and await access.may_act(request, viewer) else None

    async def decide(request: Request) -> Response:
        request_id = request.path_params["request_id"]
        if not same_origin(request):
            return page("message.html", 403, title="Refused", message="This answer was sent from another site; "
                        "open the sign-in page itself and answer there.")
        form = await request.form()
        oauth = authorization()
        pending = await oauth.grants.pending(request_id)
        if pending is None:
            return await _render(request, request_id)
        client_id, params = pending
        client = await oauth.clients.get(client_id)
        try:
            identity = await _who(request, str(form.get("token", "")).strip())  # Deny as much as Approve
            if identity is None:
                return await _render(request, request_id, 401, "That token is not valid (or was revoked), or your "
                                     "login has ended. Enter your hub token (`hermes-hub token create USER`) to "
                                     "approve or deny.")
            if form.get("decision") != "approve":
                await oauth.grants.decide(request_id)
                return _back(params, error="access_denied", error_description="the person denied the sign-in")
            code, params = await oauth.grants.approve(request_id, identity,
                                                      client.client_name if client and client.client_name else client_id)
        except GrantRefused as e:
            return page("message.html", 400, title="Sign-in expired", message=str(e))
        return _back(params, code=code)

    return [Route(CONSENT_PATH + "/{request_id}", limited(show, html=True), methods=["GET"]),
            Route(CONSENT_PATH + "/{request_id}", limited(decide, html=True), methods=["POST"])]


_REQUEST_ID = re.compile(re.escape(CONSENT_PATH) + r"/[^\s?/\"]+")


class _HideRequestIds(logging.Filter):
    """A pending sign-in's id is in the consent page's path: keep it out of the access log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) and CONSENT_PATH in a for a in record.args):
            record.args = tuple(_REQUEST_ID.sub(CONSENT_PATH + "/<hidden>", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


logging.getLogger("uvicorn.access").addFilter(_HideRequestIds())  # at import, before the first request


def _back(params: dict[str, Any], **answer: str) -> Response:
    """To the client's redirect URI with ``answer`` and the client's ``state``."""
    return RedirectResponse(construct_redirect_uri(params["redirect_uri"], **answer, state=params.get("state")), 303,
                            headers={"cache-control": "no-store"})
