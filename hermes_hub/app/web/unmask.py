"""The status page's unmask view: an admin, or the person a call belongs to, sees a masked result's original.

    GET  /status/unmask             a form: the call id (``hermes-hub audit`` and the audit show it)
    POST /status/unmask             call_id, csrf: the original, once, and an audit row naming the viewer

What ``hermes-hub audit --unmask CALL_ID`` does, for people without the hub's store and key: an admin
opens any call's original, anyone else only their own (another user's call id is "not found", audited
too). Never an MCP tool: a model must not read originals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.infra.errors import NotFound
from hermes_hub.core.pipeline.originals import unmask
from hermes_hub.app.web.access import Access

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

_CALL_ID = re.compile(r"^[0-9a-f]{8,64}$")


def unmask_routes(hub: Hub, access: Access, page: Callable[..., Response]) -> list[BaseRoute]:
    async def form(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized: log in first"}, status_code=401)
        return page("unmask.html", csrf=access.csrf(viewer), found=None, error=None, call_id="")

    async def opened(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized: log in first"}, status_code=401)
        if not await access.may_act(request, viewer):
            return JSONResponse({"error": "forbidden: missing or wrong CSRF token; reload the page and retry"}, 403)
        call_id = str((await request.form()).get("call_id", "")).strip()
        as_json = viewer.by_header or "json" in request.headers.get("accept", "")
        if not _CALL_ID.match(call_id):
            return _answer(page, as_json, 400, access.csrf(viewer), call_id,
                           error="a call id is 8 to 64 hexadecimal characters (the `call` column of hermes-hub audit)")
        keep = hub.config.guards.mask.keep_hours if hub.config.guards.mask else 24.0
        try:
            found = await unmask(hub.store, hub.vault, call_id, viewer_id=viewer.identity.user_id,
                                 admin=viewer.admin, keep_hours=keep)
        except NotFound as e:
            return _answer(page, as_json, 404, access.csrf(viewer), call_id, error=str(e))
        shown = {"call_id": found.call_id, "user": found.user_id, "tool": found.tool, "masked": found.masked,
                 "text": found.text(), "result": found.result, "arguments": found.arguments}
        return _answer(page, as_json, 200, access.csrf(viewer), call_id, found=shown)

    return [Route("/status/unmask", form, methods=["GET"]), Route("/status/unmask", opened, methods=["POST"])]


def _answer(page: Callable[..., Response], as_json: bool, status: int, csrf: str, call_id: str, *,
            found: dict[str, Any] | None = None, error: str | None = None) -> Response:
    if as_json:
        return JSONResponse(found if found is not None else {"error": error}, status_code=status,
                            headers={"cache-control": "no-store"})
    return page("unmask.html", status, csrf=csrf, found=found, error=error, call_id=call_id)
