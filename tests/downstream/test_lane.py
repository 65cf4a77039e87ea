"""Plain tool calls to a handshake-era stdio child go through the lane (``hermes_hub.downstream.lane``)
and get what the SDK's session gave them: a result that breaks the tool's output schema is refused, an
error answer is the server's error, progress reaches the host and resets the idle timeout, a cancelled
call is cancelled at the child, and a lost child or an answer too big to keep fails the call at once."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.downstream.lane import TAG, StdioLane
from tests.support import PROJECT, until

pytestmark = pytest.mark.anyio
LINE = {"command": sys.executable, "args": ["-m", "tests.fixtures.line_server"], "cwd": str(PROJECT), "timeout": 30}


def text(result: Any) -> str:
    return result.content[0].text


async def test_a_lane_call_keeps_the_sdks_checks_errors_progress_and_cancellation():
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    # a handshake-era host: its cancellation reaches the call (a 2026 host's call runs on the bridge)
    async with Hub(parse_config({"mcpServers": {"line": LINE}})) as hub, hub.client(mode="legacy") as host:
        with anyio.fail_after(30):
            assert await hub.wait_settled(20)
            conn = hub.pool.connections["line"]
            assert conn.link.lane is not None
            shaped = await host.call_tool("line_shaped", {})
            fails = await host.call_tool("line_fails", {})
            counted = await host.call_tool("line_counts", {}, progress_callback=on_progress)
            with anyio.move_on_after(0.5):  # the host gives up on a call that never answers
                await host.call_tool("line_waits", {})
            await until(lambda: any(line.startswith(f"cancelled {TAG}") for line in conn.link.stderr_tail), 10)
            after = await host.call_tool("line_counts", {})
    assert shaped.is_error and "Invalid structured content returned by tool shaped" in text(shaped)
    assert fails.is_error and "fails always fails" in text(fails)
    assert text(counted) == "counted to 3" and progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert text(after) == "counted to 3" and not conn.link.lane.pending  # nothing left behind


async def test_a_log_line_written_before_an_answer_reaches_its_host_and_a_garbled_answer_fails_its_call_only():
    got: dict[str, list[Any]] = {"ann": [], "bob": []}

    def logs_of(who: str) -> Any:
        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            got[who].append(params.data)
        return on_log

    async with Hub(parse_config({"mcpServers": {"line": LINE}})) as hub, \
            hub.client(mode="legacy", logging_callback=logs_of("ann")) as ann, \
            hub.client(mode="legacy", logging_callback=logs_of("bob")) as bob:
        with anyio.fail_after(30):
            assert await hub.wait_settled(20)
            for host in (ann, bob):
                await host.set_logging_level("info")
            said = [await ann.call_tool("line_logs", {"who": "ann"}) for _ in range(5)]
            await until(lambda: len(got["ann"]) == 5, 10)  # a host's log messages travel apart from its results
            garbled = await ann.call_tool("line_garbled", {})
            after = await bob.call_tool("line_counts", {})
    assert [text(r) for r in said] == ["logged"] * 5 and got == {"ann": ["logged for ann"] * 5, "bob": []}
    assert garbled.is_error and "not valid JSON (e.g. a lone surrogate in a string)" in text(garbled)
    assert text(after) == "counted to 3"  # the connection, and the hub, keep serving


async def test_the_lane_fails_its_calls_when_the_child_is_gone_or_an_answer_is_too_big():
    written: list[dict[str, Any]] = []

    async def send(line: bytes) -> None:  # the child's stdin
        written.append(json.loads(line))

    lane = StdioLane(send)
    errors: list[MCPError] = []
    with pytest.raises(MCPError) as nan:  # Python's json would write NaN, which no JSON reader takes
        await lane.call("x", {"v": float("nan")}, meta=None, on_progress=None)
    assert nan.value.code == types.INVALID_PARAMS and not written and not lane.pending

    async def call(name: str) -> None:
        try:
            await lane.call(name, {}, meta=None, on_progress=None)
        except MCPError as e:
            errors.append(e)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "big")
            tg.start_soon(call, "other")
            await until(lambda: len(lane.pending) == 2)
            big = written[0]["id"]
            assert await lane.take(b'{"jsonrpc": "2.0", "id": 7, "result": {}}') is False  # the SDK's id: not the lane's
            assert lane.fail(big, "the server's answer was over the hub's limit")  # as the stdout pump does
            assert not lane.fail(big, "twice")  # the first failure counts
            await until(lambda: len(errors) == 1)
            lane.close("the server exited (code 1)")
        with pytest.raises(MCPError) as later:
            await lane.call("after", {}, meta=None, on_progress=None)
    assert errors[0].message == "the server's answer was over the hub's limit"
    assert errors[1].code == types.CONNECTION_CLOSED and errors[1].message == "the server exited (code 1)"
    assert later.value.code == types.CONNECTION_CLOSED and len(written) == 2  # nothing written after the close
    assert written[0]["params"]["_meta"]["progressToken"] == big  # its progress comes back to it
