"""What the chat finds on a hub: its run tool and its agent profiles (the ``hermes_agent_<profile>``
prompts), against in-memory MCP servers standing in for hubs with and without profile prompts."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.server import MCPServer

from hermes_hub.chat.connection import ChatError
from hermes_hub.chat.conversation import Chat, discover
from hermes_hub.chat.terminal import Console

pytestmark = pytest.mark.anyio


def hub_like(*profiles: str) -> MCPServer:
    server = MCPServer("hub-like")

    @server.tool(name="hermes_agent_run")
    async def run(task: str, profile: str = "default", session_id: str | None = None) -> str:
        return f"{profile}: {task}"

    def profile_prompt(task: str) -> str:
        return task

    for name in profiles:
        server.prompt(name=f"hermes_agent_{name}")(profile_prompt)
    server.prompt(name="notes_summarize")(profile_prompt)  # another server's prompt: not a profile
    return server


async def test_profiles_come_from_the_agent_prompts_and_default_stands_in_when_there_are_none():
    async with Client(hub_like("planner", "default")) as with_prompts, Client(hub_like()) as without:
        listed, bare = await discover(with_prompts), await discover(without)
    assert (listed.run_tool, listed.prefix, listed.profiles, listed.profiles_listed) == (
        "hermes_agent_run", "hermes_", ["default", "planner"], True)
    assert (bare.profiles, bare.profiles_listed) == (["default"], False)


async def test_an_unknown_profile_is_refused_before_any_run_naming_the_profiles_there_are():
    async with Client(hub_like("planner", "default")) as client:
        with pytest.raises(ChatError) as refused:
            await Chat(Console(), profile="plannr").attach(client)
    assert (str(refused.value), refused.value.code) == ("unknown profile 'plannr'; the profiles are: default, planner",
                                                        2)


async def test_a_server_without_the_agent_tool_is_not_mistaken_for_a_hub():
    async with Client(MCPServer("plain")) as client:
        with pytest.raises(ChatError, match="not a hermes hub with an agent: it has no hermes_agent_run tool"):
            await discover(client)
