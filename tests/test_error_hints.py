"""Errors that reach a host or a model say what *they* can do; terminal commands are the CLI's to add."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import cli_hint

pytestmark = pytest.mark.anyio


async def test_a_model_is_told_to_call_status_or_list_tools_never_to_run_a_command():
    config = parse_config({"mcpServers": {"ghost": {"command": "no-such-mcp-server-binary"}}})
    async with Hub(config) as hub, hub.client() as host:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
            down = await host.call_tool("ghost_anything", {})
            with pytest.raises(MCPError) as unknown:
                await host.call_tool("nothing_here", {})
            with pytest.raises(MCPError) as typo:
                await host.call_tool("hermes_hub_statu", {})
            with pytest.raises(MCPError) as no_prompt:
                await host.get_prompt("nothing_here", {})
    texts = [down.content[0].text, unknown.value.message, no_prompt.value.message]
    assert down.is_error and "server 'ghost' is not ready (state FAILED)" in texts[0]
    assert "Retry once it is READY; hermes_hub_status shows every server's state and last error." in texts[0]
    assert "call tools/list for the current names" in texts[1]
    assert typo.value.message.startswith("unknown tool 'hermes_hub_statu'; did you mean 'hermes_hub_status'? call "
                                         "tools/list")
    assert "call prompts/list for the current names" in texts[2]
    assert not [t for t in texts if "hermes-hub " in t or "`" in t]
    # ... and the command line, reading the same words, knows what a person can run.
    assert [cli_hint(t) for t in texts] == ["run `hermes-hub servers` to see each server's state",
                                            "list the tools with `hermes-hub tools`",
                                            "list the prompts with `hermes-hub prompts`"]


def test_the_terminal_gets_the_command_to_type_instead_of_the_protocol_method():
    from hermes_hub.infra.errors import for_terminal

    assert for_terminal("unknown prompt 'x'; call prompts/list for the current names") == (
        "unknown prompt 'x'; `hermes-hub prompts` lists the current names")
