"""Supervision under fault injection: real child processes killed, stopped, crashing, flooding, and an
HTTP server stopped and started again. Small intervals keep the file fast; every wait is bounded."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.config import parse_config
from hermes_hub.downstream import Connection, Pool
from tests.support import free_port, process, toy, wait_port

pytestmark = pytest.mark.anyio

FAST = {"backoff_initial": 0.1, "backoff_max": 0.5, "health_interval": 0.3, "health_timeout": 1.0}


@asynccontextmanager
async def hub_of(servers: dict[str, Any]) -> AsyncIterator[Hub]:
    async with Hub(parse_config({"mcpServers": servers})) as h:
        with anyio.fail_after(30):
            assert await h.wait_settled(30)
        yield h


async def until(h: Hub, predicate: Any, timeout: float = 15) -> None:
    with anyio.fail_after(timeout):
        await h.pool.wait_for(predicate)


def back_up(conn: Connection, old_pid: int | None) -> Any:
    """Ready again, as a new process (stdio) or after at least one restart."""
    return lambda: conn.ready and (conn.link.pid != old_pid if old_pid else conn.restarts > 0)


def kill(conn: Connection, sig: int = signal.SIGKILL) -> int:
    assert conn.link.pid is not None
    os.kill(conn.link.pid, sig)
    return conn.link.pid


async def tool_names(host: Client) -> list[str]:
    return sorted(t.name for t in (await host.list_tools(cache_mode="refresh")).tools)  # past the cache: see support


def server(h: Hub, name: str) -> dict[str, Any]:
    return next(s for s in h.status(h.local)["servers"] if s["name"] == name)


async def test_a_child_killed_between_calls_is_restarted_and_ready_again_with_its_full_catalog():
    async with hub_of({"toy": toy(**FAST)}) as h, h.client() as host:
        conn = h.pool.connections["toy"]
        before = await tool_names(host)
        old = kill(conn)
        await until(h, lambda: not conn.ready, 5)
        assert conn.tools == [] and not any(n.startswith("toy_") for n in await tool_names(host))
        await until(h, back_up(conn, old))
        after = await tool_names(host)
        echoed = await host.call_tool("toy_echo", {"text": "back"})
        status = server(h, "toy")
    assert after == before and "toy_echo" in after
    assert echoed.content[0].text == "back"
    assert status["state"] == "READY" and status["restarts"] == 1
    assert status["last_exit_code"] == -signal.SIGKILL
    assert status["next_retry"] is None and status["health_failures"] == 0


async def test_a_child_killed_mid_call_fails_the_call_promptly_naming_the_server_and_comes_back():
    arrived = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        arrived.set()

    async with hub_of({"toy": toy(timeout=60, **FAST)}) as h, h.client() as host:
        conn = h.pool.connections["toy"]
        result: list[Any] = []
        returned = anyio.Event()

        async def call() -> None:
            result.append(await host.call_tool("toy_sleep", {"seconds": 30}, progress_callback=progress))
            returned.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await arrived.wait()
            old = kill(conn)
            started = time.monotonic()
            with anyio.fail_after(5):
                await returned.wait()
            took = time.monotonic() - started
        await until(h, back_up(conn, old))
        again = await host.call_tool("toy_echo", {"text": "again"})
    text = result[0].content[0].text
    assert result[0].is_error and took < 2.0
    assert "server 'toy'" in text and "connection lost during the request" in text
    assert "killed by signal 9" in text
    assert again.content[0].text == "again"


@pytest.mark.slow
async def test_a_child_that_exits_during_startup_every_time_ends_in_crash_loop_with_status_explaining_it():
    cfg = toy("--exit-after-start", "3", backoff_initial=0.05, backoff_max=0.3, crash_loop_after=3)
    async with hub_of({"broken": cfg}) as h, h.client() as host:
        conn = h.pool.connections["broken"]
        first = conn.state.value  # settled once the first attempt ended, though it keeps retrying
        await until(h, lambda: conn.state.value == "CRASH_LOOP")
        status = server(h, "broken")
        call = await host.call_tool("broken_echo", {"text": "x"})
    assert first in ("RESTARTING", "STARTING")
    assert status["state"] == "CRASH_LOOP" and status["restarts"] == 2
    assert status["error"].startswith("crash loop: failed 3 times in a row, each within 300s of starting; "
                                      "retrying every 0.3s. Last failure: exited during startup (process exited "
                                      "(exit 3); last stderr line: fatal: cannot open database (exit 3))")
    assert 0 <= status["next_retry"] <= 0.3 and status["last_exit_code"] == 3
    assert "fatal: cannot open database (exit 3)" in status["stderr_tail"]
    assert call.is_error and "server 'broken' is not ready (state CRASH_LOOP" in call.content[0].text


async def test_a_server_whose_command_or_cwd_is_missing_stays_failed_without_retrying(tmp_path):
    servers = {"ghost": {"command": "no-such-mcp-server-binary", **FAST},
               "lost": toy(cwd=str(tmp_path / "nowhere"), **FAST)}
    async with hub_of(servers) as h:
        states = {name: (c.state.value, c.restarts, c.next_retry) for name, c in h.pool.connections.items()}
        errors = {name: c.error for name, c in h.pool.connections.items()}
    assert states == {"ghost": ("FAILED", 0, None), "lost": ("FAILED", 0, None)}
    assert errors["lost"] == f"cwd '{tmp_path / 'nowhere'}' is not a directory; check mcpServers.lost.cwd in hub.json"


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
@pytest.mark.slow
async def test_a_child_that_stops_answering_is_marked_degraded_by_health_checks_and_restarted(mode, caplog):
    caplog.set_level(logging.WARNING, logger="hermes_hub")
    seen: list[str] = []
    cfg = parse_config({"mcpServers": {"toy": toy(mode=mode, health_failures=2, **FAST | {"health_timeout": 0.3})}})
    async with Pool(cfg, on_change=lambda c: seen.append(c.state.value)) as pool:
        conn = pool.connections["toy"]
        with anyio.fail_after(30):
            await pool.wait_for(lambda: conn.ready)
            old = kill(conn, signal.SIGSTOP)
            await pool.wait_for(back_up(conn, old))
            echoed = await conn.call_tool("echo", {"text": "awake"}, CallContext(Identity("tester")))
            states = seen[:]  # leaving the pool adds STOPPED
    method = "ping" if mode == "legacy" else "server/discover"
    assert states == ["STARTING", "READY", "DEGRADED", "RESTARTING", "STARTING", "READY"]
    assert echoed.content[0].text == "awake"
    assert f"[toy] health check 1/2 failed: no answer to {method} within 0.3s" in caplog.text
    assert (f"[toy] DEGRADED: stopped answering: 2 health checks in a row failed (last: no answer to {method} "
            f"within 0.3s); raise mcpServers.toy.health_timeout if it is just slow") in caplog.text
    assert conn.last_exit_code == -signal.SIGTERM  # stopped at once: no stdin grace for a hung child


@pytest.mark.slow
async def test_a_child_flooding_stderr_does_not_block_the_hub():
    servers = {"noisy": toy("--flood-stderr", **FAST), "quiet": toy(**FAST)}
    async with hub_of(servers) as h, h.client() as host:
        started = time.monotonic()
        with anyio.fail_after(20):
            for i in range(30):
                for name in servers:
                    result = await host.call_tool(f"{name}_echo", {"text": str(i)})
                    assert result.content[0].text == str(i)
        took = time.monotonic() - started
        tail = list(h.pool.connections["noisy"].link.stderr_tail)
        states = {s["name"]: s["state"] for s in h.status(h.local)["servers"]}
    assert states == {"noisy": "READY", "quiet": "READY"}
    assert took < 10
    assert len(tail) == 20 and tail[-1].split()[1] == "noise"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.slow
async def test_an_http_server_stopped_and_restarted_on_the_same_port_is_reconnected(tmp_path, mode):
    port = free_port()
    argv = [sys.executable, "-m", "tests.fixtures.toy_server", "--name", "remote", "--http", str(port)]
    cfg = {"url": f"http://127.0.0.1:{port}/mcp", "mode": mode, "crash_loop_after": 100, **FAST}
    # The second server outlives the hub: uvicorn waits for open streams before it stops.
    with ExitStack() as later, process(argv, tmp_path / "first.log") as first:
        with anyio.fail_after(20):
            await wait_port(port, first, tmp_path / "first.log")
        async with hub_of({"remote": cfg}) as h, h.client() as host:
            conn = h.pool.connections["remote"]
            assert conn.ready
            first.terminate()
            first.wait(10)
            await until(h, lambda: conn.state.value in ("RESTARTING", "STARTING"), 10)
            down = await host.call_tool("remote_whoami", {})
            second = later.enter_context(process(argv, tmp_path / "second.log"))
            with anyio.fail_after(20):
                await wait_port(port, second, tmp_path / "second.log")
            await until(h, back_up(conn, None), 15)
            up = await host.call_tool("remote_whoami", {})
    assert down.is_error and "server 'remote' is not ready" in down.content[0].text
    assert up.content[0].text == "remote"
    assert conn.restarts >= 1


@pytest.mark.slow
async def test_an_http_server_that_stops_answering_is_degraded_and_reconnected_once_it_answers(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hermes_hub")
    port = free_port()
    argv = [sys.executable, "-m", "tests.fixtures.toy_server", "--name", "remote", "--http", str(port)]
    cfg = {"url": f"http://127.0.0.1:{port}/mcp", "health_failures": 2, "startup_timeout": 2, **FAST}
    with process(argv, tmp_path / "server.log") as remote:
        with anyio.fail_after(20):
            await wait_port(port, remote, tmp_path / "server.log")
        async with hub_of({"remote": cfg}) as h, h.client() as host:
            conn = h.pool.connections["remote"]
            remote.send_signal(signal.SIGSTOP)
            try:
                await until(h, lambda: conn.state.value == "DEGRADED", 10)
            finally:
                remote.send_signal(signal.SIGCONT)
            await until(h, back_up(conn, None), 15)
            up = await host.call_tool("remote_whoami", {})
    assert up.content[0].text == "remote"
    assert "[remote] DEGRADED: stopped answering: 2 health checks in a row failed" in caplog.text


async def test_concurrent_callers_during_a_kill_get_a_result_or_a_clear_error_within_their_bounds():
    outcomes: list[str] = []
    async with hub_of({"toy": toy(**FAST)}) as h, h.client() as host:
        conn = h.pool.connections["toy"]
        recovered, warmed = anyio.Event(), anyio.Event()

        async def caller(n: int) -> None:
            for i in range(2000):  # bounded; ends soon after the server is back
                with anyio.fail_after(5):  # each call's own bound, well under the server's 60 s timeout
                    result = await host.call_tool("toy_echo", {"text": f"{n}-{i}"})
                text = result.content[0].text
                if not result.is_error:
                    assert text == f"{n}-{i}"
                    outcomes.append("ok")
                    if outcomes.count("ok") >= 20:
                        warmed.set()
                else:
                    assert "server 'toy'" in text, text
                    outcomes.append("not ready" if "is not ready" in text else "lost")
                if recovered.is_set() and i > 20:
                    return
                await anyio.sleep(0.005)  # pacing between calls, not a wait for state

        async with anyio.create_task_group() as tg:
            for n in range(4):
                tg.start_soon(caller, n)
            with anyio.fail_after(20):
                await warmed.wait()
                old = kill(conn)
                await h.pool.wait_for(back_up(conn, old))
            recovered.set()
        final = await host.call_tool("hermes_hub_status", {})
    assert "not ready" in outcomes and outcomes[-1] == "ok"
    assert set(outcomes) <= {"ok", "not ready", "lost"}
    assert not final.is_error
