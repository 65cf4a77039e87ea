"""Hubs chain: host → hub → hub → hub → server, with names, progress and elicitation all the way."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from tests import support
from tests.support import PROJECT, served_hub, toy, until_listed

pytestmark = pytest.mark.anyio


def stdio_hub(config: dict[str, Any], path) -> dict[str, Any]:
    # Hubs talk the handshake era to each other so servers can push elicitation up the chain.
    return support.stdio_hub(config, path, mode="legacy")


@pytest.mark.slow
async def test_three_hubs_deep_names_accumulate_and_progress_and_elicitation_pass_through(tmp_path):
    inner = stdio_hub({"mcpServers": {"toy": toy(mode="legacy")}}, tmp_path / "c.json")  # toy pushes elicitation
    middle = stdio_hub({"mcpServers": {"c": inner}}, tmp_path / "b.json")
    progress: list[float] = []
    questions: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    async with served_hub({"mcpServers": {"b": middle}}, tmp_path) as url:
        with anyio.fail_after(60):
            async with Client(url, mode="legacy", elicitation_callback=on_elicit) as host:
                # each hub answers at once and announces its servers as they come up (list_changed)
                await until_listed(host, "b_c_toy_echo", timeout=None)
                names = {t.name for t in (await host.list_tools()).tools}
                echoed = await host.call_tool("b_c_toy_echo", {"text": "three hops"})
                counted = await host.call_tool("b_c_toy_count", {"to": 3}, progress_callback=on_progress)
                confirmed = await host.call_tool("b_c_toy_confirm", {"question": "Really?"})
    # each hub lists its own four (hub.own_tools), prefixed on the way up
    assert {"b_c_toy_echo", "b_c_hermes_memory_recall", "b_hermes_memory_recall", "hermes_memory_recall"} <= names
    assert echoed.content[0].text == "three hops"
    assert counted.content[0].text == "counted to 3" and progress == [1, 2, 3]
    assert questions == ["Really?"] and confirmed.content[0].text == "accept: True"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_elicitation_a_2026_server_returns_as_input_required_reaches_hosts_of_both_eras(tmp_path, mode):
    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    asked: list[str] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    modern = {"command": sys.executable, "args": ["-m", "tests.fixtures.modern_server", "--name", "toy"],
              "cwd": str(PROJECT)}  # the toy server, refusing the handshake
    async with Hub(parse_config({"mcpServers": {"toy": modern}})) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            assert hub.pool.connections["toy"].protocol_version == "2026-07-28"
            async with hub.client(mode=mode, elicitation_callback=on_elicit) as host:
                result = await host.call_tool("toy_approve", {"item": "the budget"})
    assert asked == ["Approve the budget?"]
    assert result.content[0].text == "the budget: approved"


async def test_a_2026_host_answers_a_handshake_era_servers_pushed_elicitation_through_the_bridge():
    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    asked: list[str] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": len(asked) == 1})

    async with Hub(parse_config({"mcpServers": {"toy": toy(mode="legacy")}})) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
            async with hub.client(elicitation_callback=on_elicit) as host:
                assert host.protocol_version == "2026-07-28"
                first = await host.call_tool("toy_confirm", {"question": "Ship it?"})
                second = await host.call_tool("toy_confirm", {"question": "Really ship it?"})
    assert asked == ["Ship it?", "Really ship it?"]
    assert (first.content[0].text, second.content[0].text) == ("accept: True", "accept: False")
    assert hub.pool.connections["toy"].bridge._pending == {}  # nothing left parked
