"""Per-call deadlines: an idle timeout that progress resets, an absolute cap, per-tool overrides."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import toy

pytestmark = pytest.mark.anyio


async def timed_call(servers: dict[str, Any], tool: str, args: dict[str, Any]) -> tuple[float, Any, Any]:
    async with Hub(parse_config({"mcpServers": servers})) as hub, hub.client() as host:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            started = time.monotonic()
            result = await host.call_tool(tool, args)
            elapsed = time.monotonic() - started
            after = await host.call_tool("toy_echo", {"text": "still serving"})
    return elapsed, result, after


async def test_a_call_without_progress_times_out_at_the_idle_timeout_and_the_server_keeps_serving():
    elapsed, result, after = await timed_call({"toy": toy(timeout=0.5)}, "toy_sleep", {"seconds": 10})
    assert result.is_error and 0.4 < elapsed < 3
    assert result.content[0].text == (
        "server 'toy': tool 'sleep' timed out: no progress for 0.5s; the call was cancelled. "
        "Raise mcpServers.toy.timeout (or tool_timeouts) if it needs longer")
    assert after.content[0].text == "still serving"


@pytest.mark.slow
async def test_progress_resets_the_idle_timeout_so_a_long_call_that_reports_progress_finishes():
    elapsed, result, _ = await timed_call({"toy": toy(timeout=0.6)}, "toy_tick", {"times": 6, "every": 0.25})
    assert result.content[0].text == "ticked 6 times"
    assert elapsed > 1.2  # twice the idle timeout: only progress kept it alive


@pytest.mark.slow
async def test_the_absolute_cap_ends_a_call_even_while_it_reports_progress():
    elapsed, result, _ = await timed_call({"toy": toy(timeout=0.6, max_timeout=1.2)}, "toy_tick",
                                          {"times": 40, "every": 0.1})
    assert result.is_error and 1.0 < elapsed < 4
    assert "still running after 1.2s" in result.content[0].text and "max_timeout" in result.content[0].text


async def test_a_per_tool_timeout_overrides_the_servers():
    elapsed, result, _ = await timed_call({"toy": toy(timeout=30, tool_timeouts={"sl*": 0.3})}, "toy_sleep",
                                          {"seconds": 10})
    assert result.is_error and elapsed < 3 and "no progress for 0.3s" in result.content[0].text


@pytest.mark.slow
async def test_the_idle_timeout_does_not_run_while_a_person_answers_an_elicitation():
    import mcp.types as types

    async def slow_person(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.sleep(1.2)  # a person thinking, longer than the idle timeout
        return types.ElicitResult(action="accept", content={"ok": True})

    async with Hub(parse_config({"mcpServers": {"toy": toy(mode="legacy", timeout=0.5)}})) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            async with hub.client(mode="legacy", elicitation_callback=slow_person) as host:
                result = await host.call_tool("toy_confirm", {"question": "Sure?"})
    assert result.content[0].text == "accept: True"
