"""Issue 21 in a real `hermes-hub serve` process whose model is the real openai or anthropic SDK talking to
a local fake of the vendor's API: the route and the plan come back as the vendor's JSON answers, a
delegated run stays within its caller's tools, and `hermes-hub eval --model --base-url` runs the cases on
an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client

from tests.agent.test_intents import INTENTS
from tests.agent.test_providers import BOTH, KEY, OPENAI, Vendor, base_for
from tests.agent.vendors import FakeVendor, served
from tests.support import demo, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@BOTH
async def test_a_served_hub_routes_plans_and_delegates_with_the_vendors_sdk_and_json_answers(v: Vendor, tmp_path):
    fake = FakeVendor(v.path, quiet_judge=True)  # the judge may read the first run while the second one runs
    # a routed run: the route, one call of the routed intent's tools, the answer
    fake.answer(v.text(json.dumps({"intents": [{"name": "schedule", "confidence": 0.92, "slots": {"date": "2026-12-07"}}]})))
    fake.answer(v.tool_call("call_1", "calendar_query", {"start_date": "2026-12-07", "end_date": "2026-12-07"}))
    fake.answer(v.text("Nothing on Monday."))
    # a run that delegates to a profile that plans: delegate, plan, call, keep the plan, child's answer, answer
    fake.answer(v.tool_call("call_2", "delegate_helper", {"task": "what is on Monday 2026-12-07?"}))
    fake.answer(v.text(json.dumps({"steps": [{"id": 1, "purpose": "look at Monday", "tool": "calendar_query"}]})))
    fake.answer(v.tool_call("call_3", "calendar_query", {"start_date": "2026-12-07", "end_date": "2026-12-07"}))
    fake.answer(v.text(json.dumps({"keep": True})))
    fake.answer(v.text("Nothing on Monday."))
    fake.answer(v.text("The helper says nothing is on Monday."))
    async with served(fake) as url:
        config = {"mcpServers": {n: demo(n, tmp_path / "data") for n in ("calendar", "reminders")},
                  "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
                  "agent": {"provider": v.provider, "model": v.model, "base_url": base_for(v, url), "api_key": KEY,
                            "max_retries": 0},
                  "agents": {"office": {"intents": INTENTS},
                             "boss": {"tools": {"allow": ["calendar_query"]}, "delegates": ["helper"]},
                             "helper": {"plan": True, "tools": {"allow": ["calendar_*"]}}}}
        async with serve_process(config, tmp_path) as hub:
            with anyio.fail_after(90):
                async with Client(hub.url) as host:
                    routed = (await host.call_tool("hermes_agent_run", {"task": "what is on Monday?",
                                                                        "profile": "office"})).structured_content
                    bossed = (await host.call_tool("hermes_agent_run", {"task": "what is on Monday?",
                                                                        "profile": "boss"})).structured_content
    assert (routed["answer"], routed["stop_reason"], routed["intents"]) == ("Nothing on Monday.", "answered", ["schedule"])
    bodies = [r.body for r in fake.received]
    first, second = bodies[0], bodies[1]
    assert "tools" not in first or not first["tools"]  # the routing request offers no tools
    if v is OPENAI:
        assert first["response_format"] == bodies[4]["response_format"] == bodies[6]["response_format"] == {
            "type": "json_object"}
    asked = first["messages"][-1]["content"]
    assert (asked if v is OPENAI else asked[0]["text"]) == "Route this request:\nwhat is on Monday?"
    offered = sorted(t["function"]["name"] if v is OPENAI else t["name"] for t in second["tools"])
    assert offered == ["calendar_create_event", "calendar_query"]
    system = second["messages"][0]["content"] if v is OPENAI else second["system"]
    assert 'schedule (look at or change the calendar; 查看或安排日程); slots: date = "2026-12-07"' in (
        system if isinstance(system, str) else json.dumps(system, ensure_ascii=False).replace('\\"', '"'))

    assert (bossed["answer"], bossed["stop_reason"]) == ("The helper says nothing is on Monday.", "answered")
    said = [json.dumps(b["messages"][-1], ensure_ascii=False) for b in bodies]
    assert "Plan this task:\\nwhat is on Monday 2026-12-07?" in said[4] and "Plan revision:" in said[6]
    child_tools = sorted(t["function"]["name"] if v is OPENAI else t["name"] for t in bodies[5]["tools"])
    assert child_tools == ["calendar_query"]  # the helper may create events; its caller may not, so it is not offered
    assert "The 'helper' agent (answered, run run_" in json.dumps(bodies[8]["messages"], ensure_ascii=False)


async def test_eval_runs_the_cases_on_another_model_at_an_openai_compatible_endpoint(tmp_path):
    fake = FakeVendor(OPENAI.path)
    fake.answer(OPENAI.text("Two plus two is four."))
    (tmp_path / "model.json").write_text(json.dumps([{"text": "five"}]))
    (tmp_path / "hub.json").write_text(json.dumps({
        "mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
        "agent": {"provider": "scripted", "script": "model.json"}}))
    (tmp_path / "cases.json").write_text(json.dumps({"cases": [
        {"id": "sum", "task": "what is two plus two?", "expect": {"contains": ["four"], "stop_reason": "answered"}}]}))
    async with served(fake) as url:
        proc = await anyio.to_thread.run_sync(lambda: subprocess.run(
            [sys.executable, "-m", "hermes_hub", "eval", str(tmp_path / "cases.json"), "--config",
             str(tmp_path / "hub.json"), "--model", "qwen2.5:7b", "--base-url", url, "--json"],
            capture_output=True, text=True, timeout=100, env={**os.environ, "HERMES_DATA_DIR": str(tmp_path)}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["cases"][0]["answer"] == "Two plus two is four."
    assert fake.received[0].body["model"] == "qwen2.5:7b"
