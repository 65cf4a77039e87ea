"""The hub's state as plain data: what `hermes-hub servers`, /readyz and hermes_hub_status show."""

from __future__ import annotations

import time
from typing import Any

from hermes_hub.aggregation.catalog import Catalog
from hermes_hub.config import HubConfig
from hermes_hub.downstream import Connection, Pool
from hermes_hub.downstream.era import era


def server_status(conn: Connection, catalog: Catalog) -> dict[str, Any]:
    exposed = sum(1 for e in catalog.tools.values() if e.mount.source is conn)
    info: dict[str, Any] = {
        "name": conn.name,
        "state": conn.state.value,
        "transport": conn.cfg.transport,
        "seconds_in_state": round(time.time() - conn.since, 1),
        "protocol_version": conn.protocol_version,
        "era": era(conn.protocol_version),  # "handshake" or the 2026 version: how `mode` came out
        "server_info": conn.server_info.name if conn.server_info else None,
        "tools": len(conn.tools),
        "tools_exposed": exposed,
        "resources": len(conn.resources),
        "resource_templates": len(conn.templates),
        "prompts": len(conn.prompts),
        "error": conn.error,
        "restarts": conn.restarts,
        "next_retry": None if (wait := conn.next_retry) is None else round(wait, 1),  # seconds from now
        "health_failures": conn.health.failures,  # consecutive failed health checks
    }
    if conn.cfg.transport == "stdio":
        info.update(pid=conn.link.pid, exit_code=conn.link.exit_code, last_exit_code=conn.last_exit_code,
                    stderr_tail=list(conn.link.stderr_tail)[-5:])
    else:
        info["url"] = conn.cfg.url
    return info


def hub_status(config: HubConfig, pool: Pool, catalog: Catalog) -> dict[str, Any]:
    servers = [server_status(c, catalog) for c in pool.connections.values()]
    servers += [{"name": n, "state": "DISABLED"} for n, s in config.mcp_servers.items() if s.disabled]
    return {
        "hub": config.hub.name,
        "ready": pool.settled,
        "servers": servers,
        "totals": {
            "tools": len(catalog.tools),
            "resources": len(catalog.resources),
            "resource_templates": len(catalog.templates),
            "prompts": len(catalog.prompts),
        },
        "tool_list_tokens": catalog.token_estimate(),
        "collisions": [
            {"kind": c.kind, "name": c.public, "winner": c.winner, "loser": c.loser, "fix": c.fix}
            for c in catalog.collisions
        ],
        "name_warnings": catalog.name_warnings,
        "config_warnings": config.warnings,
    }
