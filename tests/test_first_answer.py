"""The stdio hub answers its host at once, whatever its servers do (issue 32 item 1).

Claude Code spawns the entry ``hermes-hub install claude-code`` writes, probes with ``server/discover``,
falls back to ``initialize`` after 3 s, and sends its first model request about 2 s in. These tests
start that same command with one server that needs 10 s to start and one that never starts, and
speak to it the way such a host does, line by line on the process's stdin and stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from tests.support import OWN_LISTED, PROJECT, hub_env, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# reads its stdin without ever answering: never READY, and gone once the hub closes that stdin
NEVER_STARTS = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.buffer.read()"]}
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1"},
          "io.modelcontextprotocol/clientCapabilities": {}}
SLACK = 0.5  # what the hub may add to the time Python takes to import it


def _import_seconds() -> float:
    """The baseline, measured in the same run: a bare interpreter importing what the stdio hub imports."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "import hermes_hub.app.hub, hermes_hub.app.serving.stdio"],
                   cwd=PROJECT, check=True, timeout=60)
    return time.monotonic() - start


class Host:
    """One host on the hub's stdio: writes requests, reads lines, keeps the notifications it is sent."""

    def __init__(self, proc: Process) -> None:
        self.proc, self._buffer = proc, b""
        self.notes: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())

    async def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            self._buffer += await self.proc.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    async def answer(self, request_id: int, timeout: float) -> dict[str, Any] | None:
        """The answer to ``request_id`` within ``timeout`` seconds (None: none came)."""
        with anyio.move_on_after(timeout):
            while True:
                message = await self._line()
                if message.get("id") == request_id and "method" not in message:
                    return message
                self.notes.append(message)
        return None

    async def notified(self, method: str, timeout: float) -> bool:
        if any(n.get("method") == method for n in self.notes):
            return True
        with anyio.move_on_after(timeout):
            while (await self._line()).get("method") != method:
                pass
            return True
        return False


@asynccontextmanager
async def _hub(tmp_path: Path, **hub: Any) -> AsyncIterator[tuple[Host, float]]:
    """The stdio hub as a host spawns it; closing its stdin on the way out must stop it cleanly."""
    config = {"hub": hub, "mcpServers": {"slow": toy("--name", "slow", "--start-delay", "10"), "dead": NEVER_STARTS}}
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(config))
    with (tmp_path / "hub.log").open("wb") as log:
        start = time.monotonic()
        argv = [sys.executable, "-m", "hermes_hub", "serve", "--stdio", "--config", str(path)]
        async with await anyio.open_process(argv, cwd=PROJECT, env={**os.environ, **hub_env()}, stderr=log) as proc:
            try:
                yield Host(proc), start
                assert proc.stdin is not None
                await proc.stdin.aclose()  # what a host does: the hub stops its servers and leaves
                with anyio.fail_after(15):
                    assert await proc.wait() == 0
            finally:
                if proc.returncode is None:
                    proc.kill()


def _names(answer: dict[str, Any]) -> set[str]:
    return {t["name"] for t in answer["result"]["tools"]}


async def test_claude_codes_probe_is_answered_before_any_server_is_ready(tmp_path: Path) -> None:
    baseline = _import_seconds()
    async with _hub(tmp_path) as (host, start):
        await _probe(host, start, baseline)


async def _probe(host: Host, start: float, baseline: float) -> None:
    await host.send({"id": 1, "method": "server/discover", "params": {"_meta": MODERN}})
    discovered = await host.answer(1, timeout=3)
    if discovered is None:  # Claude Code's fallback; the hub must not have needed it
        await host.send({"id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1"}}})
        pytest.fail(f"no answer to server/discover within 3 s; the fallback initialize got {await host.answer(2, 5)}")
    first = time.monotonic() - start
    assert first <= baseline + SLACK, f"first answer {first:.2f}s after start; importing the hub takes {baseline:.2f}s"
    assert "2026-07-28" in discovered["result"]["supportedVersions"]

    # The first list waits at most hub.first_list_wait (1 s) for servers that take 10 s, then has the hub's own.
    asked = time.monotonic()
    await host.send({"id": 3, "method": "tools/list", "params": {"_meta": MODERN}})
    listed = await host.answer(3, timeout=1 + SLACK + 1)
    assert listed is not None and "result" in listed, listed
    assert time.monotonic() - asked <= 1 + SLACK
    assert OWN_LISTED <= _names(listed)
    assert not {n for n in _names(listed) if n.startswith(("slow_", "dead_"))}

    # A call to a tool that needs no server works while both servers are down.
    await host.send({"id": 4, "method": "tools/call", "params": {
        "_meta": MODERN, "name": "hermes_hub_status", "arguments": {}}})
    status = await host.answer(4, timeout=10)
    assert status is not None and status["result"]["isError"] is False, status


async def test_a_handshake_host_hears_of_each_server_as_it_settles(tmp_path: Path) -> None:
    async with _hub(tmp_path) as (host, start):
        await _settling(host, start)


async def _settling(host: Host, start: float) -> None:
    await host.send({"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "inspector", "version": "1"}}})
    initialized = await host.answer(1, timeout=10)
    assert initialized is not None and initialized["result"]["capabilities"]["tools"]["listChanged"] is True
    await host.send({"method": "notifications/initialized"})
    await host.send({"id": 2, "method": "tools/list"})
    listed = await host.answer(2, timeout=5)
    assert listed is not None
    assert OWN_LISTED <= _names(listed) and "slow_echo" not in _names(listed)
    early = time.monotonic() - start

    # The slow server becomes READY about 10 s in: the hub says so, and the next list has its tools.
    assert await host.notified("notifications/tools/list_changed", timeout=30), "no list_changed once 'slow' was up"
    await host.send({"id": 3, "method": "tools/list"})
    relisted = await host.answer(3, timeout=5)
    assert relisted is not None and {"slow_echo", "slow_add"} <= _names(relisted)
    assert not {n for n in _names(relisted) if n.startswith("dead_")}
    assert early < 5, f"the hub's first list came {early:.1f}s after start, as if it had waited for its servers"

    await host.send({"id": 4, "method": "tools/call", "params": {"name": "slow_echo", "arguments": {"text": "hi"}}})
    echoed = await host.answer(4, timeout=10)
    assert echoed is not None and echoed["result"]["content"][0]["text"] == "hi", echoed


async def test_a_second_list_is_never_held(tmp_path: Path) -> None:
    """Only the first tools/list of a connection waits; with first_list_wait 0 not even that."""
    async with _hub(tmp_path, first_list_wait=0) as (host, _):
        await _unheld(host)


async def _unheld(host: Host) -> None:
    await host.send({"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "script", "version": "1"}}})
    assert await host.answer(1, timeout=10) is not None
    await host.send({"method": "notifications/initialized"})
    for request_id in (2, 3):
        asked = time.monotonic()
        await host.send({"id": request_id, "method": "tools/list"})
        assert await host.answer(request_id, timeout=5) is not None
        assert time.monotonic() - asked < 0.5
