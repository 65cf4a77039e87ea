"""Shared helpers for tests: configs with real server processes, free ports, served hubs."""

from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2

PROJECT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def demo(module: str, data: Path, **extra: Any) -> dict[str, Any]:
    """A hub.json entry running ``servers.<module>`` as a stdio child."""
    return {"command": sys.executable, "args": ["-m", f"servers.{module}"], "cwd": str(PROJECT),
            "env": {"HERMES_DEMO_DATA": str(data)}, **extra}


def toy(*args: str, **extra: Any) -> dict[str, Any]:
    """A hub.json entry running the toy fixture server with ``args``."""
    return {"command": sys.executable, "args": ["-m", "tests.fixtures.toy_server", *args], "cwd": str(PROJECT),
            **extra}


def hub_env() -> dict[str, str]:
    """Environment for a hub started as a child process: a data dir of its own. Children started by the
    hub's stdio transport or the SDK's ``StdioServerParameters`` get only an allow-list of the parent's
    variables (HERMES_DATA_DIR is not on it), so a spawned hub must be given it explicitly."""
    import tempfile

    parent = Path(os.environ["HERMES_DATA_DIR"])  # set for every test by tests/conftest.py
    return {"HERMES_DATA_DIR": tempfile.mkdtemp(prefix="spawned-hub-", dir=parent)}


def stdio_hub(config: dict[str, Any], path: Path, **extra: Any) -> dict[str, Any]:
    """A hub.json entry running ``hermes-hub serve --stdio`` over ``config`` (written to ``path``)."""
    import json

    path.write_text(json.dumps(config))
    return {"command": sys.executable, "args": ["-m", "hermes_hub", "serve", "--stdio", "--config", str(path)],
            "cwd": str(PROJECT), "env": hub_env(), **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def process(argv: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` with output to ``log``; always stopped (terminate, then kill) on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=PROJECT, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def until(check: Callable[[], Awaitable[T] | T], timeout: float | None = 30, every: float = 0.05) -> T:
    """Call ``check()`` (sync or async) every ``every`` seconds until it returns something true, and return
    that; fail after ``timeout`` seconds (None: the caller bounds it). For states the test can only look at:
    another process (a served hub, a child, a log file), a host's view, a library without an event. A hub in
    the test's own process has waits of its own: ``pool.wait_for``, ``memories.wait_idle``,
    ``summaries.wait_idle``.

        await until(lambda: "(SIGHUP)" in served.log.read_text(), timeout=10)
    """
    with anyio.fail_after(timeout):
        while True:
            value = check()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value  # type: ignore[return-value]
            await anyio.sleep(every)  # poll interval only; bounded above


@asynccontextmanager
async def serve_asgi(make: Callable[[str], Any], *, lifespan: str = "auto") -> AsyncIterator[str]:
    """Serve the ASGI app ``make(base_url)`` (something at the edge of the world: a vendor's API, an OAuth
    server) on a free loopback port; yields the base URL once it listens."""
    import uvicorn

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(uvicorn.Config(make(base), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan=lifespan))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            await until(lambda: server.started, timeout=None, every=0.01)  # uvicorn has no event for it
        try:
            yield base
        finally:
            server.should_exit = server.force_exit = True  # do not wait for a slow answer still pending


async def until_listed(host: Any, name: str, timeout: float | None = 30) -> None:
    """Wait until ``host`` (an MCP ``Client`` of a hub) lists the tool ``name``: servers join a hub's catalog
    as they become ready, and a host only sees that by listing."""
    async def listed() -> bool:
        return name in await tool_names(host)

    await until(listed, timeout=timeout)


async def wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, status: int = 200) -> httpx2.Response:
    """Poll ``url`` until it answers ``status``; the caller bounds this with ``fail_after``."""
    async with httpx2.AsyncClient(timeout=2) as http:
        async def answered() -> httpx2.Response | None:
            assert proc.poll() is None, f"process exited with {proc.returncode}:\n{log.read_text()}"
            try:
                r = await http.get(url)
            except httpx2.TransportError:
                return None
            return r if r.status_code == status else None

        return await until(answered, timeout=None)


async def wait_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until something listens on ``port``; the caller bounds this with ``fail_after``."""
    async def listening() -> bool:
        assert proc.poll() is None, f"process exited with {proc.returncode}:\n{log.read_text()}"
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return False
        await stream.aclose()
        return True

    await until(listening, timeout=None)


async def tool_names(host: Any) -> set[str]:
    """The names ``host`` (an MCP ``Client``) lists now: asked afresh, past the SDK's response cache (a
    2026-07-28 client keeps a list for the hub's ``ttlMs``; a test looking for a change looks again)."""
    return {t.name for t in (await host.list_tools(cache_mode="refresh")).tools}


@dataclass(frozen=True)
class Served:
    url: str  # the /mcp endpoint
    proc: subprocess.Popen[bytes]
    config: Path  # the hub.json it serves (edit it to reload)
    log: Path  # its stdout and stderr


@asynccontextmanager
async def serve_process(config: dict[str, Any], tmp_path: Path, host: str | None = None) -> AsyncIterator[Served]:
    """``hermes-hub serve`` (with ``--host host``) as a real process on a free port, once /readyz is 200."""
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps(config))
    port = free_port()
    log = tmp_path / "hub.log"
    argv = [sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--port", str(port)]
    reach = "127.0.0.1" if host in (None, "0.0.0.0") else host
    # A module's hub starts outside any test, where conftest's per-test data dir is not set: give it its own.
    own = {} if "HERMES_DATA_DIR" in os.environ else {"HERMES_DATA_DIR": str(tmp_path / "hermes-data")}
    with process(argv + (["--host", host] if host else []), log, own) as p:
        with anyio.fail_after(30):
            await wait_http(f"http://{reach}:{port}/readyz", p, log)
        yield Served(f"http://{reach}:{port}/mcp", p, cfg, log)


@asynccontextmanager
async def served_hub(config: dict[str, Any], tmp_path: Path) -> AsyncIterator[str]:
    """``hermes-hub serve`` as a real process on a free port; yields the /mcp URL once /readyz is 200."""
    async with serve_process(config, tmp_path) as served:
        yield served.url



class Progress(list[str]):
    """A host's progress callback that keeps each message, in order (``progress_callback=progress``)."""

    async def __call__(self, value: float, total: float | None, message: str | None) -> None:
        self.append(message or "")

# The hub's own tools, as the local user (an admin) sees them.
BUILTIN_TOOLS = {
    "hermes_hub_status", "hermes_hub_reload", "hermes_audit_query",
    *(f"hermes_session_{op}" for op in
      ("create", "list", "history", "append", "import", "search", "rename", "delete", "delete_all", "note",
       "working")),
    "hermes_agent_run", "hermes_trace_list", "hermes_trace_get", "hermes_feedback", "hermes_artifact_read",
    *(f"hermes_memory_{op}" for op in
      ("remember", "recall", "list", "forget", "forget_all", "restore", "history", "export")),
    "hermes_time_resolve",
    *(f"hermes_schedule_{op}" for op in ("create", "list", "get", "update", "delete")),
    *(f"hermes_docs_{op}" for op in ("add", "list", "forget")),
    *(f"hermes_token_{op}" for op in ("create", "list", "revoke")),  # admins only
}
# Those tools/list names by default (hub.own_tools "core"); the others are called by name.
OWN_LISTED = {"hermes_memory_remember", "hermes_memory_recall", "hermes_agent_run", "hermes_session_search"}


@asynccontextmanager
async def as_user(url: str, token: str) -> AsyncIterator[Any]:
    """An MCP ``Client`` over streamable HTTP presenting ``Authorization: Bearer <token>``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client
