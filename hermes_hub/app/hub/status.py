"""The hub's state as plain data, as one viewer may see it: what `hermes-hub servers`, /readyz,
hermes_hub_status and the status page show.

Who sees what (issue 16: a server's stderr can hold the password of its database URL):

- an admin: everything — every server with its error, pid, exit codes, stderr tail and url; hub-wide
  totals, collisions, warnings, memory counts and queues;
- any other user: only the servers their role may use (``mcpServers.X.roles``) and the tools they may
  call; each server's state, counts and restarts, but never its pid, exit codes, stderr, url or error
  text (an error shows as ``ASK_ADMIN``); totals and token costs of what they can use; memory counts
  of their own memories;
- an unauthenticated caller (/readyz): ``readiness`` only.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from hermes_hub.core.aggregation.catalog import Catalog
from hermes_hub.core.toolsets.tokens import listing_tokens
from hermes_hub.infra.call import Identity, require_identity
from hermes_hub.infra.config import HubConfig, ServerConfig
from hermes_hub.downstream import Connection, Pool
from hermes_hub.downstream.accounts import Accounts
from hermes_hub.downstream.era import era
from hermes_hub.infra.errors import ASK_ADMIN

if TYPE_CHECKING:
    import mcp.types as types


def may_use(cfg: ServerConfig, viewer: Identity) -> bool:
    """Whether ``viewer`` may use the server of ``cfg`` at all (the rule of ``Mount.serves``)."""
    return viewer.is_admin or cfg.roles is None or viewer.role in cfg.roles


def hidden(text: str | None, viewer: Identity) -> str | None:
    """``text`` (an error of the hub's machinery) for an admin; for anyone else only that there is one."""
    return text if viewer.is_admin or not text else ASK_ADMIN


def server_status(conn: Connection | Accounts, catalog: Catalog, viewer: Identity) -> dict[str, Any]:
    if isinstance(conn, Accounts):
        return accounts_status(conn, catalog, viewer)
    exposed = sum(1 for e in catalog.tools.values() if e.mount.source is conn and e.mount.offers(e.original, viewer))
    info: dict[str, Any] = {
        "name": conn.name,
        "state": conn.state.value,
        "transport": conn.cfg.transport,
        "seconds_in_state": round(time.time() - conn.since, 1),
        "protocol_version": conn.protocol_version,
        "era": era(conn.protocol_version),  # "handshake" or the 2026 version: how `mode` came out
        "server_info": conn.server_info.name if conn.server_info else None,
        "tools": len(conn.tools),
        "tools_exposed": exposed,  # of those, the ones this viewer may call
        "resources": len(conn.resources),
        "resource_templates": len(conn.templates),
        "prompts": len(conn.prompts),
        "error": hidden(conn.error, viewer),
        "fix": conn.error if conn.state.value == "NEEDS_AUTH" else None,  # how to sign in: anyone may read it
        "restarts": conn.restarts,
        "next_retry": None if (wait := conn.next_retry) is None else round(wait, 1),  # seconds from now
        "health_failures": conn.health.failures,  # consecutive failed health checks
    }
    if not viewer.is_admin:  # a process's pid, exit codes, stderr and an url's credentials are the operator's
        return info
    if conn.cfg.transport == "stdio":
        info.update(pid=conn.link.pid, exit_code=conn.link.exit_code, last_exit_code=conn.last_exit_code,
                    stderr_tail=list(conn.link.stderr_tail)[-5:])
    else:
        info["url"] = conn.cfg.url
    return info


def accounts_status(accounts: Accounts, catalog: Catalog, viewer: Identity) -> dict[str, Any]:
    """A ``per_user`` server: how many users are connected; which users, and their processes, to admins only."""
    exposed = sum(1 for e in catalog.tools.values()
                  if e.mount.source is accounts and e.mount.offers(e.original, viewer))
    info: dict[str, Any] = {
        "name": accounts.name, "state": accounts.state.value, "transport": accounts.cfg.transport,
        "per_user": True, "users_connected": accounts.connected,
        "max_children": accounts.cfg.max_children, "idle_stop": accounts.cfg.idle_stop,
        "seconds_in_state": round(time.time() - accounts.since, 1),
        "protocol_version": accounts.protocol_version, "era": era(accounts.protocol_version),
        "server_info": accounts.server_info.name if accounts.server_info else None,
        "tools": len(accounts.tools), "tools_exposed": exposed, "resources": len(accounts.resources),
        "resource_templates": len(accounts.templates), "prompts": len(accounts.prompts),
        "error": hidden(accounts.error, viewer), "restarts": accounts.restarts, "next_retry": None,
        "health_failures": 0,
    }
    if viewer.is_admin:
        info["accounts"] = accounts.accounts()
        if accounts.cfg.transport != "stdio":
            info["url"] = accounts.cfg.url
    return info


async def add_accounts(pool: Pool, servers: list[dict[str, Any]], viewer: Identity) -> None:
    """Each ``per_user`` server of ``servers`` gets ``account``: whether ``viewer``'s own is connected, or how;
    ``connect``: the viewer may sign their own account in (an OAuth server they have no working grant for)."""
    for s in servers:
        if isinstance(conn := pool.connections.get(s["name"]), Accounts):
            s["account"] = await conn.account(viewer.user_id)
            s["connect"] = conn.signs_in and "hermes-hub login" in s["account"]


def data_location(config: HubConfig) -> dict[str, str]:
    """Where ``config`` keeps its data: the folder, the store (a PostgreSQL URL without its password) and the
    secret key (its file, or ``HERMES_SECRET_KEY``): what `hermes-hub check` and an admin's status page show."""
    from hermes_hub.infra.storage import default_data_dir, default_url, is_postgres, sqlite_path
    from hermes_hub.infra.storage.postgres.url import redact
    from hermes_hub.services.vault import KEY_ENV, key_file

    url = config.storage.url or default_url()
    if is_postgres(url):
        folder, store = default_data_dir(), f"{redact(url)} (PostgreSQL)"
    else:
        path = sqlite_path(url, config.base_dir)[0]
        folder, store, url = path.parent, f"{path} (SQLite)", f"sqlite:///{path}"
    key = f"{KEY_ENV} (the environment)" if os.environ.get(KEY_ENV) else str(key_file(url))
    return {"folder": str(folder), "store": store, "secret_key": key}


def hub_status(config: HubConfig, pool: Pool, catalog: Catalog, viewer: Identity,
               listed: list[types.Tool]) -> dict[str, Any]:
    """The servers ``viewer`` may use and the totals of what they may use (an admin: everything); ``listed``:
    what ``/mcp`` lists them, whose cost in tokens is counted as ``hermes-hub tools --tokens`` counts it."""
    require_identity(viewer)
    servers = [server_status(c, catalog, viewer) for c in pool.connections.values() if may_use(c.cfg, viewer)]
    servers += [{"name": n, "state": "DISABLED"} for n, s in config.mcp_servers.items()
                if s.disabled and may_use(s, viewer)]
    tools = catalog.list_tools(viewer)
    out: dict[str, Any] = {
        "hub": config.hub.name,
        "ready": pool.settled,
        "servers": servers,
        "totals": {
            "tools": len(tools),
            "tools_listed": len(listed),
            "resources": len(catalog.visible(catalog.resources, viewer)),
            "resource_templates": len(catalog.visible(catalog.templates, viewer)),
            "prompts": len(catalog.visible(catalog.prompts, viewer)),
        },
        "tool_list_tokens": listing_tokens(listed),
        "collisions": [],
        "name_warnings": catalog.name_warnings if viewer.is_admin else [],  # fixes in hub.json: the admin's
        "config_warnings": config.warnings if viewer.is_admin else [],
        # pinned tools withheld because their server changed them: what changed, the diff, how to approve
        "drift": [d.as_dict() for _, d in catalog.withheld.values()] if viewer.is_admin else [],
    }
    if viewer.is_admin:  # paths on the hub's machine: the admin's to know
        out["data"] = data_location(config)
    shown = {m.source.name for m in catalog.mounts if m.serves(viewer)}
    out["collisions"] = [
        {"kind": c.kind, "name": c.public, "winner": c.winner, "loser": c.loser, "fix": c.fix}
        for c in catalog.collisions if viewer.is_admin or {c.winner, c.loser} <= shown
    ]
    return out


def readiness(pool: Pool) -> dict[str, Any]:
    """What /readyz tells anyone, with or without a token: whether the hub is ready (also its status
    code, 200 or 503: all an orchestrator's probe needs) and the state of each server.

    Servers open to every role are listed by name and state. Servers limited to some roles
    (``mcpServers.X.roles``) are only counted by state under ``restricted``: even a name ("payroll-db")
    tells a stranger what the hub reaches, while the counts still show why the hub is not ready. Never
    an error text, stderr, pid or exit code: those go to admins (``/status.json`` with an admin's token).
    """
    conns = pool.connections.values()
    return {
        "ready": pool.settled,
        "servers": [{"name": c.name, "state": c.state.value} for c in conns if c.cfg.roles is None],
        "restricted": dict(Counter(c.state.value for c in conns if c.cfg.roles is not None)),
    }
