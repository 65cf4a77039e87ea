"""agent.provider "sampling": the calling host's own model runs the loop, through MCP sampling with
tool use, pushed to handshake-era hosts and asked in input-required rounds of 2026-07-28 hosts."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest

from hermes_hub import Hub
from tests.support import toy

pytestmark = pytest.mark.anyio


def write_hub(tmp_path) -> str:
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"toy": toy()},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
        "agent": {"provider": "sampling", "model": "claude-sonnet-4-5"},
    }))
    return str(cfg)


class HostModel:
    """The host's side of sampling: calls toy_echo once, then answers with what the tool said."""

    def __init__(self) -> None:
        self.requests: list[types.CreateMessageRequestParams] = []

    async def __call__(self, ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.requests.append(params)
        last = params.messages[-1].content
        blocks = last if isinstance(last, list) else [last]
        results = [b for b in blocks if isinstance(b, types.ToolResultContent)]
        if results:
            said = results[0].content[0].text
            return types.CreateMessageResult(role="assistant", model="host-model", stop_reason="endTurn",
                                             content=types.TextContent(type="text", text=f"The tool said {said}."))
        return types.CreateMessageResultWithTools(
            role="assistant", model="host-model", stop_reason="toolUse",
            content=[types.ToolUseContent(type="tool_use", id="use_1", name="toy_echo", input={"text": "hi"})])


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_hosts_own_model_runs_the_loop_and_calls_the_catalogs_tools(tmp_path, mode):
    model = HostModel()
    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode=mode, sampling_callback=model) as host:
            with anyio.fail_after(60):
                out = (await host.call_tool("hermes_agent_run", {"task": "echo hi"})).structured_content
        report = await hub.report(hub.local)
    assert (out["answer"], out["stop_reason"], out["rounds"]) == ("The tool said hi.", "answered", 2)
    assert out["tool_calls"][0]["name"] == "toy_echo" and not out["tool_calls"][0]["is_error"]
    first = model.requests[0]
    assert "toy_echo" in [t.name for t in first.tools] and first.model_preferences.hints[0].name == "claude-sonnet-4-5"
    assert first.messages[-1].content.text == "echo hi"
    assert hub.agent_bridge._pending == {}
    assert "summaries" not in report  # no host outside a call: background work that needs a model is off


async def test_a_host_without_sampling_gets_a_model_error_saying_what_to_change(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client(mode="legacy") as host:
        with anyio.fail_after(60):
            result = await host.call_tool("hermes_agent_run", {"task": "echo hi"})
    assert result.is_error and result.structured_content["stop_reason"] == "model_error"
    assert "agent.provider is 'sampling' but the calling host cannot be asked for a model" in result.content[0].text
