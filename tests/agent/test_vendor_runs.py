"""Whole agent runs in a real `hermes-hub serve` process whose model is the real anthropic or openai SDK
talking to a local fake of the vendor's API: the shipped path, from a host's HTTP call to the vendor's
wire format and back."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from tests.agent.test_providers import BOTH, KEY, OPENAI, Vendor, base_for
from tests.agent.vendors import FakeVendor, served
from tests.support import serve_process, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def hub_config(v: Vendor, url: str, tmp_path, key: str = KEY) -> dict:
    return {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "agent": {"provider": v.provider, "model": v.model, "base_url": base_for(v, url), "api_key": key,
                      "max_retries": 0}}


@BOTH
async def test_a_served_hubs_run_calls_a_tool_for_the_vendors_model_and_returns_its_answer(v: Vendor, tmp_path):
    fake = FakeVendor(v.path)
    fake.answer(v.tool_call("call_1", "toy_echo", {"text": "from the model"}))
    fake.answer(v.text("The echo said: from the model."))
    async with served(fake) as url, serve_process(hub_config(v, url, tmp_path), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                out = (await host.call_tool("hermes_agent_run", {"task": "echo something"})).structured_content
    assert (out["answer"], out["stop_reason"], out["rounds"]) == ("The echo said: from the model.", "answered", 2)
    assert out["tool_calls"][0]["name"] == "toy_echo" and not out["tool_calls"][0]["is_error"]
    first, second = fake.received[0].body, fake.received[1].body
    offered = [t["function"]["name"] if v is OPENAI else t["name"] for t in first["tools"]]
    assert "toy_echo" in offered and not [n for n in offered if n.startswith("hermes_agent")]
    assert "from the model" in str(second["messages"][-1])  # the tool's result went back in the vendor's format
    assert out["usage"]["input_tokens"] > 0


@BOTH
async def test_a_refused_key_ends_the_run_with_the_setting_to_fix_and_the_key_is_nowhere(v: Vendor, tmp_path):
    fake = FakeVendor(v.path)
    fake.answer(v.error(401, "invalid x-api-key"), status=401, times=5)
    async with served(fake) as url, serve_process(hub_config(v, url, tmp_path), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                result = await host.call_tool("hermes_agent_run", {"task": "echo something"})
                trace = (await host.call_tool("hermes_trace_get", {"run_id": result.structured_content["run_id"]}
                                              )).structured_content
    env = "OPENAI_API_KEY" if v is OPENAI else "ANTHROPIC_API_KEY"
    assert result.is_error and result.structured_content["stop_reason"] == "model_error"
    assert f"the API key for provider '{v.provider}' was refused" in result.content[0].text
    assert f"agent.api_key or {env}" in result.content[0].text
    assert KEY not in hub.log.read_text() and KEY not in str(trace)
