"""Routing (issue 21) in a real `hermes-hub serve` process whose model is the real openai or anthropic SDK
talking to a local fake of the vendor's API: the route comes back as the vendor's JSON answer, and the
loop's next request offers only the routed intent's tools."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from tests.agent.test_intents import INTENTS
from tests.agent.test_providers import BOTH, KEY, OPENAI, Vendor, base_for
from tests.agent.vendors import FakeVendor, served
from tests.support import demo, serve_process

pytestmark = pytest.mark.anyio


@BOTH
async def test_a_served_hub_routes_with_the_vendors_json_answer_and_offers_only_that_intents_tools(v: Vendor, tmp_path):
    route = {"intents": [{"name": "schedule", "confidence": 0.92, "slots": {"date": "2026-12-07"}}]}
    fake = FakeVendor(v.path)
    fake.answer(v.text(json.dumps(route)))
    fake.answer(v.tool_call("call_1", "calendar_query", {"start_date": "2026-12-07", "end_date": "2026-12-07"}))
    fake.answer(v.text("Nothing on Monday."))
    async with served(fake) as url:
        config = {"mcpServers": {n: demo(n, tmp_path / "data") for n in ("calendar", "reminders")},
                  "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
                  "agent": {"provider": v.provider, "model": v.model, "base_url": base_for(v, url), "api_key": KEY,
                            "max_retries": 0},
                  "agents": {"office": {"intents": INTENTS}}}
        async with serve_process(config, tmp_path) as hub:
            with anyio.fail_after(60):
                async with Client(hub.url) as host:
                    out = (await host.call_tool("hermes_agent_run", {"task": "what is on Monday?",
                                                                     "profile": "office"})).structured_content
    assert (out["answer"], out["stop_reason"], out["intents"]) == ("Nothing on Monday.", "answered", ["schedule"])
    first, second = fake.received[0].body, fake.received[1].body
    assert "tools" not in first or not first["tools"]  # the routing request offers no tools
    if v is OPENAI:
        assert first["response_format"] == {"type": "json_object"}
    asked = first["messages"][-1]["content"]
    assert (asked if v is OPENAI else asked[0]["text"]) == "Route this request:\nwhat is on Monday?"
    offered = sorted(t["function"]["name"] if v is OPENAI else t["name"] for t in second["tools"])
    assert offered == ["calendar_create_event", "calendar_query"]
    system = second["messages"][0]["content"] if v is OPENAI else second["system"]
    assert 'schedule (look at or change the calendar; 查看或安排日程); slots: date = "2026-12-07"' in (
        system if isinstance(system, str) else json.dumps(system, ensure_ascii=False).replace('\\"', '"'))
