"""What a debugging command talks to: the hub in-process, a running hub or server by URL, or one
raw server (a command, or an entry of hub.json) directly, so a hub problem can be told from a
server problem. Every target is reached through the same MCP ``Client``.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.infra.config import HubConfig, ServerConfig, load_config
from hermes_hub.infra.errors import HubError

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub


_ASKED = {"over http": False}  # set when this command talks to a hub (or a server) over HTTP
_HEAVY = ("hermes_hub.app.hub", "hermes_hub.infra.storage.sqlite", "hermes_hub.infra.storage.postgres")


def only_asked_over_http() -> bool:
    """Whether this command only talked over HTTP: no hub built here and no store opened (their modules are
    imported only to do so), so nothing of its own is left to close when it ends."""
    return _ASKED["over http"] and not any(name in sys.modules for name in _HEAVY)


class BadTarget(HubError):
    """The command line names a target that cannot exist (a usage error, exit 2)."""


@dataclass(frozen=True)
class Target:
    config: str = "hub.json"
    url: str | None = None
    command: str | None = None
    direct: str | None = None  # a server key in the config, reached without the hub
    token: str | None = field(default=None, repr=False)  # a bearer token for url: never shown

    def describe(self) -> str:
        if self.url is not None:
            return self.url
        if self.command is not None:
            return f"`{self.command}`"
        if self.direct is not None:
            return f"server '{self.direct}' of {self.config} (direct)"
        return f"hub from {self.config}"


@asynccontextmanager
async def connect(target: Target) -> AsyncIterator[tuple[Client, Hub | None]]:
    """Yield a connected ``Client`` (and the in-process ``Hub`` when there is one)."""
    if target.url is not None:
        async with _over_http(target.url, target.token) as client:
            yield client, None
    elif target.command is not None or target.direct is not None:
        from hermes_hub.downstream.transports import Link, open_transport  # only a raw server needs them

        cfg, base = _raw_server(target)
        # The deadline bounds the handshake only; it is lifted once connected.
        scope = anyio.CancelScope(deadline=anyio.current_time() + cfg.startup_timeout)
        link, connected = Link(), False

        @asynccontextmanager
        async def transport() -> AsyncIterator[Any]:
            async with open_transport(target.direct or "server", cfg, base, link) as streams:
                try:
                    yield streams
                except Exception as exc:
                    if not connected and _gone(exc):  # the child went away: let its exit code and last words land
                        with anyio.move_on_after(1, shield=True):
                            await link.closed.wait()
                    raise

        try:
            with scope:
                async with Client(transport(), mode=cfg.mode) as client:
                    scope.deadline, connected = float("inf"), True
                    yield client, None
        except Exception as exc:
            leaf = _leaf(exc)
            if connected or not isinstance(leaf, MCPError):
                raise
            if _gone(leaf) and link.exit_code is not None:
                tail = f"; its last stderr line: {link.stderr_tail[-1]}" if link.stderr_tail else ""
                raise HubError(f"{target.describe()} exited during startup (exit {link.exit_code}){tail}") from None
            raise HubError(f"{target.describe()} failed the MCP handshake: {leaf.message} (code {leaf.code}); "
                           f"is it an MCP server speaking JSON-RPC on stdout?") from None
        if scope.cancelled_caught:
            raise HubError(f"{target.describe()} did not complete the MCP handshake within {cfg.startup_timeout:g}s")
    else:
        from hermes_hub.app.hub import Hub  # the whole hub: imported only when it is built here

        hub = Hub.from_file(target.config)
        hub.fires = False  # a one-off command runs no schedules (the serving hub does)
        async with hub:
            longest = max((s.startup_timeout for s in hub.config.enabled().values()), default=0)
            await hub.wait_settled(longest + 1)
            async with hub.client() as client:  # acting as the local user
                yield client, hub


@asynccontextmanager
async def _over_http(url: str, token: str | None = None) -> AsyncIterator[Client]:
    """A ``Client`` over streamable HTTP (with ``Authorization: Bearer`` when there is a token); failing to
    connect names the URL and what to check, and never the token."""
    refused: list[int] = []  # HTTP statuses >= 400: the SDK reports them all as "Server returned an error response"

    async def note(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            refused.append(response.status_code)

    _ASKED["over http"] = True
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [note]})
    connected = False
    try:
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            connected = True
            yield client
    except Exception as exc:
        cause = _leaf(exc)
        if connected or not isinstance(cause, httpx2.HTTPError | MCPError):
            raise
        raise HubError(_unreachable(url, cause, refused[-1] if refused else None, token)) from None


def _unreachable(url: str, cause: BaseException, status: int | None, token: str | None) -> str:
    """Why ``url`` could not be reached, as a sentence; a token is never part of it."""
    made = "`hermes-hub token create USER` on the hub's machine makes one"
    if status == 401 and not token:
        return f"{url} answered 401: this hub needs a token: pass --token or set HERMES_TOKEN ({made})"
    if status == 401:
        return (f"{url} refused the token (401): it is unknown, revoked or expired; pass a valid one with --token "
                f"or HERMES_TOKEN ({made})")
    if status == 403:
        return f"{url} refused the request (403): the token's user may not use this hub; ask an admin"
    if status == 429:
        return f"{url} answered 429: too many refused tokens from this address; wait a minute and try again"
    if status == 404 or isinstance(cause, MCPError) and cause.message == "Not Found":
        return f"{url} answered 404: no MCP endpoint at that path (a hub serves it at /mcp)"
    reason = cause.message if isinstance(cause, MCPError) else f"{type(cause).__name__}: {cause}"
    if token:
        reason = reason.replace(token, "<token>")
    return f"cannot connect to {url} ({reason}); is the hub (`hermes-hub serve`) or server running?"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _gone(exc: BaseException) -> bool:
    """Did the session end because the server closed the connection?"""
    leaf = _leaf(exc)
    return isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED


def _raw_server(target: Target) -> tuple[ServerConfig, Path]:
    if target.command is not None:
        try:
            argv = shlex.split(target.command)
        except ValueError as e:  # an unbalanced quote
            raise BadTarget(f"--command cannot be split into words ({e}): {target.command}") from None
        if not argv:
            raise BadTarget("--command is empty; give the server's command line, "
                            "e.g. --command 'python -m servers.notes'")
        # Run it as the shell would: with the caller's environment (a hub.json entry gets only its own `env`).
        return ServerConfig(command=argv[0], args=argv[1:], env=dict(os.environ)), Path.cwd()
    config: HubConfig = load_config(target.config)
    if target.direct not in config.mcp_servers:
        known = ", ".join(config.mcp_servers) or "none"
        raise BadTarget(f"--direct {target.direct}: {target.config} has no server '{target.direct}'; "
                        f"known servers: {known}")
    cfg = config.mcp_servers[target.direct]
    # a per_user server's ${secret:NAME}s are its users' own: reached directly, it starts with none of them
    return (cfg.with_secrets({}) if cfg.per_user else cfg), config.base_dir
