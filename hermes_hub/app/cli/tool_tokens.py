"""``hermes-hub tools --tokens``: what each endpoint's, server's and tool's schemas cost a host's context."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types

from hermes_hub.app.cli import tables


async def token_report(client: Any, hub: Any, listed: list[types.Tool]) -> dict[str, Any]:
    """The hub's own report (in-process, or its status tool over the wire); for another server, its listing's."""
    if hub is not None:
        return hub.token_report(hub.local)
    status = tables.status_tool(listed)
    if status is not None:
        result = await client.call_tool(status, {})
        data = result.structured_content or json.loads(tables.result_text(result))
        if "tool_tokens" in data:
            return data["tool_tokens"]
    from hermes_hub.core.toolsets.tokens import listing_tokens, per_server, tokenizer

    return {"tokenizer": tokenizer()[0], "servers": per_server(listed),
            "endpoints": [{"endpoint": "(this server)", "expose": "all", "tools_listed": len(listed),
                           "tokens": listing_tokens(listed)}],
            "tools": {t.name: listing_tokens([t]) for t in listed}}


def render(report: dict[str, Any], server: str | None = None) -> str:
    """Endpoints, then servers, then tools, heaviest first; counted how, said at the end."""
    parts = []
    endpoints = [[e["endpoint"], e["expose"], e["tools_listed"], e["tokens"], e.get("tools_reachable", ""),
                  e.get("tokens_all", ""), e.get("tokens_lazy", ""), e.get("lazy_saves", "")]
                 for e in report["endpoints"]]
    parts.append(tables.table(["endpoint", "expose", "listed", "tokens", "reachable", "if all", "if lazy",
                               "lazy saves"], endpoints))
    servers = [[name, s["tools"], s["tokens"]] for name, s in report["servers"].items() if server in (None, name)]
    parts.append(tables.table(["server", "tools", "tokens"], servers))
    tools = [[name, n] for name, n in report["tools"].items()
             if server is None or name.startswith(f"{server}")]
    parts.append(tables.table(["tool", "tokens"], tools))
    parts.append(f"tokens counted with {report['tokenizer']}")
    return "\n\n".join(parts)
