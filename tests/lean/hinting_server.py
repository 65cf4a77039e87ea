"""A small MCP server that sets cache hints on its lists and reads (2026-07-28 ``ttlMs``/``cacheScope``).

    python -m tests.lean.hinting_server --name weather --ttl 30000 --scope public     # stdio

``grow`` adds a tool and announces it on both eras' channels, so a hub's hint for that list must
drop at once; ``grow(hold=S)`` holds the next tools/list for S seconds, so the hub's stale copy can
be looked at meanwhile. Its resource ``doc://readme`` is read with the same hint.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from mcp.server import CacheHint, MCPServer
from mcp.server.mcpserver import Context

METHODS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read")


def build_server(name: str, ttl: int, scope: str) -> MCPServer:
    hint = CacheHint(ttl_ms=ttl, scope=scope)  # type: ignore[arg-type]
    mcp = MCPServer(name, cache_hints=dict.fromkeys(METHODS, hint))  # type: ignore[arg-type]
    added: list[str] = []
    hold: list[float] = []

    async def held_listing(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/list" and hold:
            await anyio.sleep(hold.pop())  # the server's own slowness, not a test's wait
        return await call_next(ctx)

    mcp._lowlevel_server.middleware.append(held_listing)  # noqa: SLF001

    @mcp.tool()
    def forecast(city: str) -> str:
        """Tomorrow's weather in a city."""
        return f"sunny in {city}"

    @mcp.tool()
    async def grow(ctx: Context, hold_s: float = 0) -> str:
        """Add a tool and say so (list_changed on both eras' channels); hold the next listing hold_s seconds."""
        if hold_s:
            hold.append(hold_s)
        new = f"added_{len(added) + 1}"
        added.append(new)
        mcp.add_tool(lambda: new, name=new, description="A tool added at run time.")
        await ctx.notify_tools_changed()
        await ctx.session.send_tool_list_changed()
        return new

    @mcp.resource("doc://readme", mime_type="text/plain")
    def readme() -> str:
        return "read me"

    @mcp.prompt()
    def brief(topic: str) -> str:
        return f"Brief me on {topic}."

    return mcp


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="weather")
    p.add_argument("--ttl", type=int, default=30_000)
    p.add_argument("--scope", choices=["public", "private"], default="public")
    a = p.parse_args()
    build_server(a.name, a.ttl, a.scope).run("stdio")


if __name__ == "__main__":
    main()
