"""The status page's "Waiting for your approval": calls of the viewer's that wait for a yes (``guards.approve``).

    GET  /status/approvals/{approval_id}           the whole call, every argument in full (masked)
    POST /status/approvals/{approval_id}/approve   csrf: run the call
    POST /status/approvals/{approval_id}/deny      csrf: refuse it

The list shows every argument of each call, shortened (``pipeline.preview``); the whole call is one
click away, for the caller it is for, or an admin (anyone else: 404, as for an unknown id).

Only the viewer's own approvals are listed, and only the viewer's own can be answered: the store's update
names the viewer's identity (``storage.approvals``), so another user's id answers as an unknown one does,
admins included. Every POST carries the viewer's CSRF token; every decision is an audit row.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.infra.errors import NotFound
from hermes_hub.core.pipeline.preview import Preview
from hermes_hub.infra.storage.approvals import PENDING
from hermes_hub.app.web.access import Access

if TYPE_CHECKING:
    from hermes_hub.infra.call import Identity
    from hermes_hub.app.hub import Hub

log = logging.getLogger("hermes_hub.app.web")


async def approvals_view(hub: Hub, viewer: Identity) -> list[dict[str, Any]]:
    """The viewer's pending approvals, newest first."""
    if not hub.started:
        return []
    return [{"id": r.id, "tool": r.tool, "server": r.server, "arguments": Preview.of_json(r.preview).lines(),
             "expires_at": r.expires_at.isoformat()[:19]} for r in await hub.approvals.pending(viewer)]


def approval_routes(hub: Hub, access: Access, page: Callable[..., Response]) -> list[BaseRoute]:
    async def shown(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized: log in first"}, status_code=401)
        try:
            record = await hub.approvals.seen_by(request.path_params["approval_id"], viewer.identity,
                                                 admin=viewer.admin)
        except NotFound as e:
            return JSONResponse({"error": str(e)}, status_code=404)
        try:
            arguments: Any = json.loads(record.preview)
        except ValueError:  # a row kept before whole calls were: its cut preview
            arguments = record.preview
        found = {"id": record.id, "tool": record.tool, "server": record.server, "user": record.user_id,
                 "state": record.state, "expires_at": record.expires_at.isoformat()[:19], "arguments": arguments}
        if viewer.by_header or "json" in request.headers.get("accept", ""):
            return JSONResponse(found, headers={"cache-control": "no-store"})
        own = record.user_id == viewer.identity.user_id and record.state == PENDING
        return page("approval.html", a=found, lines=Preview.of_json(record.preview).lines(), own=own,
                    whole=json.dumps(arguments, ensure_ascii=False, indent=2), approval_csrf=access.csrf(viewer))

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

    return [Route("/status/approvals/{approval_id}", shown, methods=["GET"]),
            Route("/status/approvals/{approval_id}/approve", approve, methods=["POST"]),
            Route("/status/approvals/{approval_id}/deny", deny, methods=["POST"])]
