"""How the chat reaches a hub: a hub it spawns over stdio (``hermes-hub serve --stdio --config hub.json``)
or a running one at a streamable HTTP URL, optionally with a bearer token.

    async with connect(Endpoint(url="http://127.0.0.1:8600/mcp"), elicitation_callback=ask) as client:
        ...

The connection uses the handshake era (``mode="legacy"``): there the hub can push its confirmation
questions (elicitation) and progress to the chat while a run is going, in both transports.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HANDSHAKE_SECONDS = 60  # a spawned hub answers at once; its servers may still be starting, which is fine


class ChatError(Exception):
    """Something the person must fix; ``code`` is the exit status (2: the command line, 1: the rest)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Endpoint:
    config: str = "hub.json"  # spawned over stdio unless ``url`` is given
    url: str | None = None
    token: str | None = None
    verbose: bool = False  # the spawned hub's log on stderr (else warnings only)
    log: Path | None = None  # the spawned hub's log goes to this file instead of the terminal (an interactive chat)

    def describe(self) -> str:
        return self.url or f"the hub of {self.config} (spawned over stdio)"


@asynccontextmanager
async def connect(endpoint: Endpoint, **callbacks: Any) -> AsyncIterator[Client]:
    """A connected ``Client``; a hub that cannot be reached is a ``ChatError`` saying what to check."""
    if endpoint.token and not endpoint.url:
        raise ChatError("--token is for --url (a spawned hub's caller is the local user)", 2)
    refused: list[int] = []  # HTTP statuses >= 400: the SDK reports them all as "Server returned an error response"
    target: Any = _http(endpoint, refused) if endpoint.url else _spawned(endpoint)
    scope = anyio.CancelScope(deadline=anyio.current_time() + HANDSHAKE_SECONDS)  # bounds the handshake only
    connected = False
    try:
        async with target as transport:
            with scope:
                async with Client(transport, mode="legacy", **callbacks) as client:
                    scope.deadline, connected = float("inf"), True
                    yield client
    except Exception as exc:
        leaf = _leaf(exc)  # the SDK's task groups wrap what the chat raised inside the block
        if connected and not isinstance(leaf, ChatError):
            raise
        raise _why(endpoint, leaf, refused[-1] if refused else None) from None
    if scope.cancelled_caught and not connected:
        raise ChatError(f"{endpoint.describe()} did not answer the MCP handshake within {HANDSHAKE_SECONDS}s")


@asynccontextmanager
async def _http(endpoint: Endpoint, refused: list[int]) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {endpoint.token}"} if endpoint.token else {}

    async def note(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            refused.append(response.status_code)

    # No read limit: a run with a real model can take minutes; Ctrl-C is the person's limit.
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None),
                                  event_hooks={"response": [note]}) as http:
        yield streamable_http_client(endpoint.url, http_client=http)  # type: ignore[arg-type]


@asynccontextmanager
async def _spawned(endpoint: Endpoint) -> AsyncIterator[StdioServerParameters]:
    path = Path(endpoint.config)
    if not path.is_file():
        raise ChatError(f"no hub config at {path}: run the chat where hub.json is, give --config PATH, "
                        f"or --url http://HOST:PORT/mcp of a running hub", 2)
    # The whole environment, unlike the SDK's allow-list: hub.json's ${VAR}s, API keys and HERMES_DATA_DIR
    # are for the hub, which is the person's own program.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hermes_hub", "serve", "--stdio", "--config", str(path.resolve()),
              *(() if endpoint.verbose else ("--quiet",))],
        env=dict(os.environ), cwd=os.getcwd())
    if endpoint.log is None:
        yield params
        return
    endpoint.log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with endpoint.log.open("a", encoding="utf-8") as log:  # the hub's warnings, not over the prompt
        yield stdio_client(params, errlog=log)


def chat_log() -> Path:
    """Where an interactive chat keeps the spawned hub's log: ``chat.log`` in the hub's data folder (the same
    folder ``hermes_hub.infra.storage.default_data_dir`` names; this program imports only the MCP SDK)."""
    if os.environ.get("HERMES_DATA_DIR"):
        return Path(os.environ["HERMES_DATA_DIR"]).expanduser() / "chat.log"
    return Path(os.environ.get("XDG_DATA_HOME") or "~/.local/share").expanduser() / "hermes-hub" / "chat.log"


def _why(endpoint: Endpoint, cause: BaseException, status: int | None) -> BaseException:
    if isinstance(cause, ChatError):
        return cause
    if endpoint.url is None:
        if isinstance(cause, MCPError):
            where = f"is in {endpoint.log}" if endpoint.log else "is printed above"
            return ChatError(f"the hub (`hermes-hub serve --stdio --config {endpoint.config}`) stopped during "
                             f"startup ({cause.message}); its own error {where}, and "
                             f"`hermes-hub check {endpoint.config}` shows what is wrong with the config")
        return cause
    if status == 404 or isinstance(cause, MCPError) and cause.message == "Not Found":
        return ChatError(f"{endpoint.url} answered 404: no MCP endpoint at that path (a hub serves it at /mcp)")
    if status == 401 and not endpoint.token:
        return ChatError(f"{endpoint.url} answered 401: this hub needs a token: pass --token or set HERMES_TOKEN "
                         f"(`hermes-hub token create USER` makes one)")
    if status == 401:
        return ChatError(f"{endpoint.url} refused the token (401): pass a valid one with --token or HERMES_TOKEN "
                         f"(`hermes-hub token create USER` makes one)")
    if status == 403:
        return ChatError(f"{endpoint.url} refused the request (403): give a token whose user may use the hub; "
                         f"`hermes-hub token create USER` makes one")
    if isinstance(cause, httpx2.HTTPError | MCPError | OSError):
        reason = cause.message if isinstance(cause, MCPError) else f"{type(cause).__name__}: {cause}"
        return ChatError(f"cannot connect to {endpoint.url} ({reason}); is the hub running (`hermes-hub serve`), "
                         f"and is the URL its /mcp endpoint?")
    return cause


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
