"""stdio: for hosts such as Claude Desktop that spawn the hub. Ends when the host closes stdin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from hermes_hub.hub import Hub


async def serve_stdio(hub: Hub) -> None:
    async with hub, stdio_server() as (read, write):
        await hub.server.run(read, write, hub.server.create_initialization_options())
