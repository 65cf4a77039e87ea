"""What a debugging command talks to: the hub in-process, a running hub or server by URL, or one
raw server (a command, or an entry of hub.json) directly, so a hub problem can be told from a
server problem. Every target is reached through the same MCP ``Client``.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.config import HubConfig, ServerConfig, load_config
from hermes_hub.downstream.transports import Link, open_transport
from hermes_hub.errors import ConfigError, HubError
from hermes_hub.hub import Hub


@dataclass(frozen=True)
class Target:
    config: str = "hub.json"
    url: str | None = None
    command: str | None = None
    direct: str | None = None  # a server key in the config, reached without the hub

    def describe(self) -> str:
        if self.url:
            return self.url
        if self.command:
            return f"command {self.command!r}"
        return f"server '{self.direct}' of {self.config} (direct)" if self.direct else f"hub from {self.config}"


@asynccontextmanager
async def connect(target: Target) -> AsyncIterator[tuple[Client, Hub | None]]:
    """Yield a connected ``Client`` (and the in-process ``Hub`` when there is one)."""
    if target.url:
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300))
        async with http, Client(streamable_http_client(target.url, http_client=http)) as client:
            yield client, None
    elif target.command or target.direct:
        cfg, base = _raw_server(target)
        # The deadline bounds the handshake only; it is lifted once connected.
        scope = anyio.CancelScope(deadline=anyio.current_time() + cfg.startup_timeout)
        with scope:
            async with Client(open_transport(target.direct or "server", cfg, base, Link()), mode=cfg.mode) as client:
                scope.deadline = float("inf")
                yield client, None
        if scope.cancelled_caught:
            raise HubError(f"{target.describe()} did not complete the MCP handshake within {cfg.startup_timeout:g}s")
    else:
        config = load_config(target.config)
        async with Hub(config) as hub:
            longest = max((s.startup_timeout for s in config.enabled().values()), default=0)
            await hub.wait_settled(longest + 1)
            async with Client(hub.server) as client:
                yield client, hub


def _raw_server(target: Target) -> tuple[ServerConfig, Path]:
    if target.command:
        argv = shlex.split(target.command)
        if not argv:
            raise HubError("--command is empty; give the server's command line, e.g. --command 'python -m servers.notes'")
        return ServerConfig(command=argv[0], args=argv[1:]), Path.cwd()
    config: HubConfig = load_config(target.config)
    if target.direct not in config.mcp_servers:
        known = ", ".join(config.mcp_servers) or "none"
        raise ConfigError([(f"mcpServers.{target.direct}", f"no such server; known servers: {known}")], target.config)
    return config.mcp_servers[target.direct], config.base_dir
