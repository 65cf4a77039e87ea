"""The status page's "Waiting for your approval": calls of the viewer's that wait for a yes (``guards.approve``).

    POST /status/approvals/{approval_id}/approve   csrf: run the call
    POST /status/approvals/{approval_id}/deny      csrf: refuse it

Only the viewer's own approvals are listed, and only the viewer's own can be answered: the store's update
names the viewer's identity (``storage.approvals``), so another user's id answers as an unknown one does,
admins included. Every POST carries the viewer's CSRF token; every decision is an audit row.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.errors import NotFound
from hermes_hub.web.access import Access

if TYPE_CHECKING:
    from hermes_hub.call import Identity
    from hermes_hub.hub import Hub

log = logging.getLogger("hermes_hub.web")


async def approvals_view(hub: Hub, viewer: Identity) -> list[dict[str, Any]]:
    """The viewer's pending approvals, newest first."""
    if not hub.started:
        return []
    return [{"id": r.id, "tool": r.tool, "server": r.server, "arguments": r.preview,
             "expires_at": r.expires_at.isoformat()[:19]} for r in await hub.approvals.pending(viewer)]


def approval_routes(hub: Hub, access: Access) -> list[BaseRoute]:
    async def answer(request: Request, approve: bool) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized: log in first"}, status_code=401)
        if not await access.may_act(request, viewer):
            return JSONResponse({"error": "forbidden: missing or wrong CSRF token; reload the page and retry"}, 403)
        approval_id = request.path_params["approval_id"][:64]
        try:
            decided = await hub.approvals.decide(approval_id, viewer.identity, approve=approve, via="status_page")
        except NotFound as e:
            return JSONResponse({"error": str(e)}, status_code=404)
        log.info("status page: approval %s %s by %s", decided.id, decided.state, viewer.identity.user_id)
        if viewer.by_header or "json" in request.headers.get("accept", ""):
            return JSONResponse({"approval": decided.id, "state": decided.state, "tool": decided.tool})
        return RedirectResponse("/status#approvals", 303)

    async def approve(request: Request) -> Response:
        return await answer(request, approve=True)

    async def deny(request: Request) -> Response:
        return await answer(request, approve=False)

    return [Route("/status/approvals/{approval_id}/approve", approve, methods=["POST"]),
            Route("/status/approvals/{approval_id}/deny", deny, methods=["POST"])]
