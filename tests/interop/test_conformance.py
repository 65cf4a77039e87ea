"""The MCP conformance suite (0.1.16, server scenarios, Node 22) against the hub's HTTP endpoint.

The hub aggregates interop/conformance-server.mjs at prefix "" (so the suite's fixture names are
the public names); the suite runs against that server directly and through the hub in the same
test, and every scenario that passes directly must pass through the hub, except the known gaps below.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import Client

from tests.interop.conftest import (
    CONFORMANCE,
    CONFORMANCE_SERVER,
    CONFORMANCE_SH,
    NODE22,
    node,
    require,
    run,
)
from tests.support import free_port, process, served_hub, wait_port

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]
ERAS = ["auto", "legacy"]

# Scenarios that pass directly but may not through the hub, with the reason. Empty: the hub relays
# everything the suite checks, including sampling/elicitation requests sent back during tools/call.
NOT_YET_RELAYED: set[str] = set()  # every scenario passes through the hub (sampling and elicitation are relayed)
SCENARIOS = 32  # `conformance list --server`, suite "all"


@pytest.fixture(scope="module")
async def urls(tmp_path_factory):
    """(direct, through the hub): the conformance target, and a hub serving it at prefix ""."""
    require(CONFORMANCE_SERVER)
    tmp = tmp_path_factory.mktemp("conformance")
    port, log = free_port(), tmp / "conformance-server.log"
    with process([node(), str(CONFORMANCE_SERVER), "--port", str(port)], log) as target:
        with anyio.fail_after(30):
            await wait_port(port, target, log)
        direct = f"http://127.0.0.1:{port}/mcp"
        async with served_hub({"mcpServers": {"conf": {"type": "http", "url": direct, "prefix": ""}}}, tmp) as hub:
            yield direct, hub


async def conformance(url: str, out: Path, results: dict[str, dict[str, str]], key: str) -> None:
    """Run every server scenario against ``url``; ``results[key]`` = {scenario: "pass" | "fail"}."""
    require(NODE22, CONFORMANCE, CONFORMANCE_SH)
    done = await run(["bash", str(CONFORMANCE_SH), url, str(out), "--suite", "all"], timeout=300)
    summary = out / "summary.json"
    assert summary.exists(), f"conformance.sh wrote no summary (exit {done.code}):\n{done.err[-3000:]}"
    results[key] = json.loads(summary.read_text())


def why(out: Path, scenario: str) -> str:
    """The failed checks of ``scenario`` in a conformance output directory, one line each."""
    lines = []
    for checks in out.glob(f"server-{scenario}-*/checks.json"):
        lines += [f"{c['id']}: {c.get('errorMessage')}" for c in json.loads(checks.read_text())
                  if c["status"] == "FAILURE"]
    return "; ".join(lines) or "no checks.json"


async def test_every_conformance_scenario_that_passes_directly_passes_through_the_hub(urls, tmp_path):
    direct_url, hub_url = urls
    results: dict[str, dict[str, str]] = {}
    with anyio.fail_after(300):
        async with anyio.create_task_group() as tg:
            tg.start_soon(conformance, direct_url, tmp_path / "direct", results, "direct")
            tg.start_soon(conformance, hub_url, tmp_path / "hub", results, "hub")
    direct, hub = results["direct"], results["hub"]
    passing = {s for s, r in direct.items() if r == "pass"}
    failing_directly = {s: why(tmp_path / "direct", s) for s in direct if s not in passing}
    assert len(direct) == SCENARIOS and not failing_directly, f"the target itself fails: {failing_directly}"

    lost = {s: why(tmp_path / "hub", s) for s in sorted(passing) if hub.get(s) != "pass"}
    unexpected = {s: reason for s, reason in lost.items() if s not in NOT_YET_RELAYED}
    assert not unexpected, f"passes directly but not through the hub: {json.dumps(unexpected, indent=2)}"
    now_relayed = NOT_YET_RELAYED - set(lost)
    assert not now_relayed, f"now pass through the hub: remove {sorted(now_relayed)} from NOT_YET_RELAYED"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("level, expected", [("info", 3), ("warning", 0)])
async def test_log_messages_a_tool_sends_during_a_call_reach_the_calling_host_from_its_level_up(
        urls, mode, level, expected):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    # 2026 hosts opt in per request (log_level); handshake-era hosts with logging/setLevel.
    with anyio.fail_after(30):
        async with Client(urls[1], mode=mode, logging_callback=on_log, log_level=level) as host:
            if mode == "legacy":
                assert host.server_capabilities.logging is not None
                await host.set_logging_level(level)
            result = await host.call_tool("test_tool_with_logging", {})
    assert result.content[0].text == "Tool with logging executed successfully"
    assert [(m.level, m.logger, m.data) for m in logs] == [
        ("info", "conf/conformance-target", text)
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed")
    ][:expected]


async def test_a_host_that_did_not_opt_in_to_logging_gets_no_log_messages(urls):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    with anyio.fail_after(30):
        async with Client(urls[1], logging_callback=on_log) as host:  # 2026-07-28, no log_level
            await host.call_tool("test_tool_with_logging", {})
    assert logs == []


async def test_resource_subscribe_and_unsubscribe_are_forwarded_to_the_server(urls):
    with anyio.fail_after(30):
        async with Client(urls[1], mode="legacy") as host:
            assert host.server_capabilities.resources.subscribe
            subscribed = await host.subscribe_resource("test://watched-resource")
            unsubscribed = await host.unsubscribe_resource("test://watched-resource")
    assert subscribed == types.EmptyResult() and unsubscribed == types.EmptyResult()
