"""Which protocol era ``mode: "auto"`` speaks to each kind of downstream server (hermes_hub/downstream/era.py).

Servers that accept the handshake get it (they can push requests and honour subscriptions only
there); a server that speaks only 2026-07-28 is still reached, on the same connection; a stateless
HTTP server, whose handshake has no channel for pushed requests, is spoken to at 2026-07-28.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as types
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import PROJECT, free_port, process, toy, until_listed, wait_port

pytestmark = pytest.mark.anyio
MODERN = [sys.executable, "-m", "tests.fixtures.modern_server"]
TOY = [sys.executable, "-m", "tests.fixtures.toy_server"]
STATELESS = [sys.executable, "-m", "tests.fixtures.stateless_server"]


def stdio(argv: list[str], **extra: Any) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:], "cwd": str(PROJECT), **extra}


@pytest.mark.slow
async def test_auto_speaks_the_handshake_to_servers_that_accept_it_and_2026_to_servers_that_refuse_it(tmp_path):
    dual_port, modern_port = free_port(), free_port()
    with process([*TOY, "--name", "dual", "--http", str(dual_port)], tmp_path / "dual.log") as dual, \
            process([*MODERN, "--http", str(modern_port)], tmp_path / "modern.log") as modern:
        with anyio.fail_after(30):
            await wait_port(dual_port, dual, tmp_path / "dual.log")
            await wait_port(modern_port, modern, tmp_path / "modern.log")
        servers = {
            "dual_stdio": toy(), "modern_stdio": stdio(MODERN),
            "dual_http": {"url": f"http://127.0.0.1:{dual_port}/mcp"},
            "modern_http": {"url": f"http://127.0.0.1:{modern_port}/mcp"},
            "pinned": toy(mode="2026-07-28"), "legacy": stdio(MODERN, mode="legacy"),
        }
        async with Hub(parse_config({"mcpServers": servers})) as hub:
            with anyio.fail_after(30):
                await hub.wait_settled(30)
                async with hub.client() as host:
                    echoed = {name: await host.call_tool(f"{name}_echo", {"text": name})
                              for name in servers if name != "legacy"}
            status = {s["name"]: (s["state"], s["protocol_version"], s["era"]) for s in hub.status(hub.local)["servers"]}
            refused = hub.pool.connections["legacy"].error
    handshake, modern_era = ("READY", "2025-11-25", "handshake"), ("READY", "2026-07-28", "2026-07-28")
    assert {name: status[name] for name in servers if name != "legacy"} == {
        "dual_stdio": handshake, "dual_http": handshake,
        "modern_stdio": modern_era, "modern_http": modern_era, "pinned": modern_era}
    assert status["legacy"][0] in ("RESTARTING", "CRASH_LOOP")  # "legacy" keeps insisting on the handshake
    assert refused.startswith("handshake failed: ") and refused.endswith('try mode "auto"')
    assert {name: r.content[0].text for name, r in echoed.items()} == {name: name for name in echoed}


@pytest.mark.parametrize("host_mode", ["auto", "legacy"])
async def test_a_server_pushing_its_elicitation_reaches_hosts_of_both_eras_in_auto_mode(host_mode):
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    async with Hub(parse_config({"mcpServers": {"toy": toy()}})) as hub:  # toy's `confirm` pushes elicitation
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            async with hub.client(mode=host_mode, elicitation_callback=on_elicit) as host:
                result = await host.call_tool("toy_confirm", {"question": "Ship it?"})
    assert asked == ["Ship it?"]
    assert result.content[0].text == "accept: True"


@pytest.mark.parametrize("mode, tool", [("auto", "grow_session"), ("legacy", "grow_session"),
                                        ("2026-07-28", "grow_bus")])
async def test_a_tool_the_server_adds_reaches_hosts_when_announced_on_the_channel_of_the_era_spoken(mode, tool):
    server = stdio([sys.executable, "-m", "tests.fixtures.announcing_server"], mode=mode, prefix="")
    async with Hub(parse_config({"mcpServers": {"a": server}})) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            async with hub.client() as host:
                added = (await host.call_tool(tool, {})).content[0].text
                await until_listed(host, added, timeout=None)  # bounded by fail_after
                result = await host.call_tool(added, {})
    assert result.content[0].text == added


@pytest.mark.parametrize("host_mode", ["auto", "legacy"])
async def test_a_stateless_http_server_is_spoken_to_at_2026_so_its_returned_elicitation_reaches_hosts(
        tmp_path, host_mode):
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    port = free_port()
    with process([*STATELESS, "--http", str(port)], tmp_path / "stateless.log") as server:
        with anyio.fail_after(30):
            await wait_port(port, server, tmp_path / "stateless.log")
        async with Hub(parse_config({"mcpServers": {"sl": {"url": f"http://127.0.0.1:{port}/mcp"}}})) as hub:
            with anyio.fail_after(30):
                await hub.wait_settled(30)
                async with hub.client(mode=host_mode, elicitation_callback=on_elicit) as host:
                    result = await host.call_tool("sl_approve", {"item": "the plan"})
            era = hub.pool.connections["sl"].protocol_version
    assert era == "2026-07-28"
    assert asked == ["Approve the plan?"] and result.content[0].text == "the plan: approved"
