"""A downstream MCP server for the telemetry tests: ``seen`` answers with the ``traceparent`` its request's
``_meta`` carried (empty when none), as a server that continues the hub's trace would read it."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("traced")


@server.tool()
async def seen(ctx: Context) -> str:
    meta = ctx.request_context.meta
    extra = (meta.model_dump() if hasattr(meta, "model_dump") else dict(meta or {})) if meta is not None else {}
    return str(extra.get("traceparent", ""))


if __name__ == "__main__":
    server.run("stdio")
