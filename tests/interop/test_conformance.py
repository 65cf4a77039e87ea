"""The MCP conformance suite (0.1.16, server scenarios, Node 22) against the hub's HTTP endpoint,
scenario by scenario against the same server directly, for each downstream ``mode``.

Three targets, each served to the hub at prefix "" (so the suite's fixture names are the public names):
- "python": tests/fixtures/conformance_server.py, an ``mcp`` 2.3 ``MCPServer`` whose tools push their
  sampling and elicitation requests and which serves resources/subscribe, as a stdio child;
- "typescript": interop/conformance-server.mjs (SDK 1.32, handshake era only), over HTTP;
- "python-via-hub": the Python server behind a second hub (a stdio child of the first).
"Directly" is the server itself over streamable HTTP. Every scenario that passes directly must pass
through the hub; the only exceptions are the entries of NOT_YET_RELAYED, which must still fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

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
from tests.support import PROJECT, free_port, process, served_hub, wait_port

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]
ERAS = ["auto", "legacy"]
TARGETS = ["python", "typescript", "python-via-hub"]
SCENARIOS = 32  # `conformance list --server`, suite "all"

# (target, mode) -> {scenario: why it passes directly but not through the hub}. Today every scenario
# of every target passes through the hub in both modes. An entry here must be a scenario that passes
# directly and fails through the hub: the test fails on a new loss and on an entry that now passes.
NOT_YET_RELAYED: dict[tuple[str, str], dict[str, str]] = {}
PYTHON_SERVER = [sys.executable, "-m", "tests.fixtures.conformance_server"]


def hub_entry(target: str, mode: str, direct: dict[str, str], tmp: Path) -> dict[str, Any]:
    """The hub.json entry that serves ``target`` to the hub in ``mode``."""
    if target == "typescript":
        return {"type": "http", "url": direct["typescript"], "prefix": "", "mode": mode}
    python = {"command": PYTHON_SERVER[0], "args": PYTHON_SERVER[1:], "cwd": str(PROJECT), "prefix": "", "mode": mode}
    if target == "python":
        return python
    inner = tmp / f"inner-{mode}.json"  # the inner hub talks to the server in the same mode
    inner.write_text(json.dumps({"mcpServers": {"conf": python}}))
    return {"command": sys.executable, "args": ["-m", "hermes_hub", "serve", "--stdio", "--config", str(inner)],
            "cwd": str(PROJECT), "env": {"HERMES_DATA_DIR": str(tmp / f"inner-data-{mode}")}, "prefix": "",
            "mode": mode}


@pytest.fixture(scope="module")
async def direct(tmp_path_factory):
    """{target: URL}: each conformance server over streamable HTTP, for the whole module."""
    require(CONFORMANCE_SERVER)
    tmp = tmp_path_factory.mktemp("direct")
    ts_port, py_port = free_port(), free_port()
    with process([node(), str(CONFORMANCE_SERVER), "--port", str(ts_port)], tmp / "typescript.log") as ts, \
            process([*PYTHON_SERVER, "--http", str(py_port)], tmp / "python.log") as py:
        with anyio.fail_after(30):
            await wait_port(ts_port, ts, tmp / "typescript.log")
            await wait_port(py_port, py, tmp / "python.log")
        python = f"http://127.0.0.1:{py_port}/mcp"
        yield {"typescript": f"http://127.0.0.1:{ts_port}/mcp", "python": python, "python-via-hub": python}


@pytest.fixture(scope="module")
def direct_results() -> dict[str, dict[str, str]]:
    """The suite's verdicts for each server directly, run once per module (by the first test that needs them)."""
    return {}


@pytest.fixture(scope="module")
async def urls(direct, tmp_path_factory):
    """(direct, through the hub) for the TypeScript server, with the hub in the default mode."""
    tmp = tmp_path_factory.mktemp("conformance")
    async with served_hub({"mcpServers": {"conf": {"type": "http", "url": direct["typescript"], "prefix": ""}}},
                          tmp) as hub:
        yield direct["typescript"], hub


async def conformance(url: str, out: Path) -> dict[str, str]:
    """Run every server scenario against ``url``: {scenario: "pass" | "fail"}."""
    require(NODE22, CONFORMANCE, CONFORMANCE_SH)
    done = await run(["bash", str(CONFORMANCE_SH), url, str(out), "--suite", "all"], timeout=300)
    summary = out / "summary.json"
    assert summary.exists(), f"conformance.sh wrote no summary (exit {done.code}):\n{done.err[-3000:]}"
    return json.loads(summary.read_text())


def why(out: Path, scenario: str) -> str:
    """The failed checks of ``scenario`` in a conformance output directory, one line each."""
    lines = []
    for checks in out.glob(f"server-{scenario}-*/checks.json"):
        lines += [f"{c['id']}: {c.get('errorMessage')}" for c in json.loads(checks.read_text())
                  if c["status"] == "FAILURE"]
    return "; ".join(lines) or "no checks.json"


def table(target: str, mode: str, direct: dict[str, str], hub: dict[str, str]) -> str:
    """One line per scenario, for the failure message and interop/README.md."""
    rows = [f"{s:34} direct={direct.get(s, '-'):4} hub={hub.get(s, '-')}" for s in sorted(direct | hub)]
    passed = sum(r == "pass" for r in hub.values())
    return f"{target}, mode {mode!r}: {passed}/{len(hub)} through the hub\n" + "\n".join(rows)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.slow
async def test_every_conformance_scenario_that_passes_directly_passes_through_the_hub(
        direct, direct_results, target, mode, tmp_path):
    with anyio.fail_after(300):
        if target not in direct_results:
            direct_results[target] = await conformance(direct[target], tmp_path / "direct")
        async with served_hub({"mcpServers": {"conf": hub_entry(target, mode, direct, tmp_path)}}, tmp_path) as url:
            hub = await conformance(url, tmp_path / "hub")
    verdicts = direct_results[target]
    passing = {s for s, r in verdicts.items() if r == "pass"}
    assert len(verdicts) == SCENARIOS and len(passing) == SCENARIOS, \
        f"the {target} server itself fails directly: {sorted(set(verdicts) - passing)}"
    print(table(target, mode, verdicts, hub))

    expected = NOT_YET_RELAYED.get((target, mode), {})
    assert set(expected) <= passing, f"NOT_YET_RELAYED names scenarios that do not pass directly: {expected}"
    lost = {s: why(tmp_path / "hub", s) for s in sorted(passing) if hub.get(s) != "pass"}
    unexpected = {s: reason for s, reason in lost.items() if s not in expected}
    assert not unexpected, f"passes directly but not through the hub: {json.dumps(unexpected, indent=2)}"
    now_relayed = set(expected) - set(lost)
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
