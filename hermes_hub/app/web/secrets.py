"""The status page's "Your secrets": the logged-in person sets and deletes their own ``${secret:NAME}``s.

    POST /status/secrets          name, value, csrf: set (or replace) the viewer's secret
    POST /status/secrets/delete   name, csrf: delete it

Only the viewer's own secrets, only names and dates are ever shown back (never a value), every POST
carries the viewer's CSRF token, and each change is audited by name alone. A per_user server waiting
for the secret looks again at once; a running connection keeps what it started with until it stops.
Never an MCP tool: a model must not see these values.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.infra.config.sections import SECRET_KIND, SECRET_NAME_RE
from hermes_hub.downstream.accounts import Accounts
from hermes_hub.infra.errors import HubError
from hermes_hub.services.vault import MAX_VALUE_BYTES
from hermes_hub.app.web.access import Access

if TYPE_CHECKING:
    from hermes_hub.infra.call import Identity
    from hermes_hub.app.hub import Hub

log = logging.getLogger("hermes_hub.app.web")


async def secrets_view(hub: Hub, viewer: Identity) -> dict[str, Any]:
    """The viewer's secrets (names, when set, which servers use them) and the ones their servers still want;
    ``shown``: whether the page has a "Your secrets" section at all."""
    if not hub.started:
        return {"shown": False, "set": [], "wanted": []}
    rows = await hub.vault.names(viewer.user_id, SECRET_KIND)
    servers = {name: conn.cfg.secret_names for name, conn in hub.pool.connections.items()
               if isinstance(conn, Accounts) and (viewer.is_admin or conn.cfg.roles is None
                                                  or viewer.role in conn.cfg.roles)}
    have = {r.name for r in rows}
    # shown where there is something to set or see: a per_user server this viewer may use, or their own secrets
    return {"shown": bool(servers or rows), "set": [{"name": r.name, "updated_at": r.updated_at.isoformat()[:19],
                     "servers": [s for s, names in servers.items() if r.name in names]} for r in rows],
            "wanted": sorted({n for names in servers.values() for n in names} - have)}


def secret_routes(hub: Hub, access: Access) -> list[BaseRoute]:
    async def change(request: Request, delete: bool) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "unauthorized: log in first"}, status_code=401)
        if not await access.may_act(request, viewer):
            return JSONResponse({"error": "forbidden: missing or wrong CSRF token; reload the page and retry"}, 403)
        form = await request.form()
        name, value = str(form.get("name", "")).strip(), str(form.get("value", ""))
        if not SECRET_NAME_RE.match(name):
            return JSONResponse({"error": "a secret's name holds letters, digits, '_', '.' and '-' (at most 64)"}, 400)
        if not delete and not value.strip():
            return JSONResponse({"error": f"no value given for secret '{name}'"}, 400)
        if len(value.encode()) > MAX_VALUE_BYTES:
            return JSONResponse({"error": f"a secret's value is at most {MAX_VALUE_BYTES:,} bytes"}, 400)
        user = viewer.identity.user_id
        try:
            async with hub.audit_action(viewer.identity, "status_secret_delete" if delete else "status_secret_set",
                                        {"name": name}):  # the name only, never the value
                if delete:
                    await hub.vault.delete(user, SECRET_KIND, name)
                else:
                    await hub.vault.put(user, SECRET_KIND, name, value)
        except HubError as e:
            return JSONResponse({"error": str(e)}, status_code=409)
        for conn in hub.pool.connections.values():
            if isinstance(conn, Accounts) and name in conn.cfg.secret_names:
                conn.poke()
        log.info("status page: %s %s secret '%s'", user, "deleted" if delete else "set", name)
        done = {"deleted" if delete else "set": name, "user": user}
        if viewer.by_header or "json" in request.headers.get("accept", ""):
            return JSONResponse(done)
        return RedirectResponse("/status#secrets", 303)

    async def set_secret(request: Request) -> Response:
        return await change(request, delete=False)

    async def delete_secret(request: Request) -> Response:
        return await change(request, delete=True)

    return [Route("/status/secrets", set_secret, methods=["POST"]),
            Route("/status/secrets/delete", delete_secret, methods=["POST"])]
