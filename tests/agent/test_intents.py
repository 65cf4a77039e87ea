"""Intents with slots (issue 21): a profile with ``intents`` routes first, asks when unsure or short of a
required slot, offers only the routed intents' tools, and routes a request with two intents to both in order.
Through an MCP host against a hub with the demo servers and the scripted model."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from hermes_hub import Hub
from tests.support import Progress, demo

pytestmark = pytest.mark.anyio

ROUTE = "^Route this request:\n"
REMIND = {"name": "reminders_send_reminder", "arguments": {"content": "team call", "time": "2026-12-01T17:00:00+00:00"}}
MONDAY = {"name": "calendar_query", "arguments": {"start_date": "2026-12-07", "end_date": "2026-12-07"}}
RULES = [
    {"when": ROUTE + "remind me at five and show my Monday", "json": {"intents": [
        {"name": "remind", "confidence": 0.9, "slots": {"content": "team call", "time": "five"}},
        {"name": "schedule", "confidence": 0.8, "slots": {"date": "Monday", "colour": "red"}}]}},
    {"when": ROUTE + "do the thing", "json": {"intents": [{"name": "schedule", "confidence": 0.3}]}},
    {"when": ROUTE + "remind me about the call", "json": {"intents": [
        {"name": "remind", "confidence": 0.95, "slots": {"content": "the call"}}]}},
    {"when": "remind me at five and show my Monday", "tool_calls": [REMIND, MONDAY]},
    {"when": "rem-1", "text": "Reminder set for five, and Monday is free."},
    {"when": "do the thing", "tool_calls": [MONDAY]},
    {"when": "remind me about the call", "tool_calls": [{"name": "reminders_send_reminder", "arguments": {
        "content": "the call", "time": "2026-12-01T17:00:00+00:00"}}]},
]
INTENTS = [
    {"name": "schedule", "description": "look at or change the calendar; 查看或安排日程", "required": ["date"],
     "optional": ["time", "attendees"], "tools": ["calendar_*"], "fallback_tool": "calendar_query"},
    {"name": "remind", "description": "set a reminder at a time", "required": ["content", "time"],
     "tools": ["reminders_*", "hermes_time_resolve"]},
]


def write_hub(tmp_path, fallback: str = "ask") -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {name: demo(name, tmp_path / "data") for name in ("calendar", "reminders", "notes")},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {"office": {"intents": INTENTS, "routing": {"confidence_threshold": 0.6, "fallback": fallback}}},
    }))
    return str(cfg)


async def run(host: Client, task: str, **kw: Any) -> dict[str, Any]:
    with anyio.fail_after(60):
        result = await host.call_tool("hermes_agent_run", {"task": task, "profile": "office"}, **kw)
    return result.structured_content


async def trace(host: Client, run_id: str) -> list[dict[str, Any]]:
    return (await host.call_tool("hermes_trace_get", {"run_id": run_id})).structured_content["events"]


async def test_a_request_with_two_intents_routes_to_both_in_order_and_offers_only_their_tools(tmp_path):
    progress = Progress()

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            out = await run(host, "remind me at five and show my Monday", progress_callback=progress)
            events = await trace(host, out["run_id"])
    assert (out["stop_reason"], out["intents"]) == ("answered", ["remind", "schedule"])
    assert [c["name"] for c in out["tool_calls"]] == ["reminders_send_reminder", "calendar_query"]
    route = next(e for e in events if e["kind"] == "route")
    assert [(r["intent"], r["confidence"], r["slots"]) for r in route["intents"]] == [
        ("remind", 0.9, {"content": "team call", "time": "five"}), ("schedule", 0.8, {"date": "Monday"})]
    assert (route["outcome"], route["threshold"], route["asked"]) == ("routed", 0.6, 0)  # the unknown slot dropped
    budget = next(e for e in events if e["kind"] == "budget")
    assert budget["tools_offered"] == 5  # calendar 2 + reminders 2 + hermes_time_resolve; notes are not offered
    assert progress[0] == "routed to remind (0.90; content=team call; time=five) then schedule (0.80; date=Monday)"


async def test_below_the_threshold_the_person_is_asked_which_intent_then_the_missing_slot(tmp_path):
    asked: list[dict[str, Any]] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append({"message": params.message, "schema": params.requested_schema})
        fields = params.requested_schema["properties"]
        return types.ElicitResult(action="accept", content={"intent": "schedule"} if "intent" in fields
                                  else {"date": "2026-12-07"})

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy", elicitation_callback=on_elicit) as host:
            out = await run(host, "do the thing")
            events = await trace(host, out["run_id"])
    assert [list(a["schema"]["properties"]) for a in asked] == [["intent"], ["date"]]
    assert asked[0]["message"].startswith("I am not sure what you want (my best guess: schedule at 0.30)")
    assert asked[0]["schema"]["properties"]["intent"]["enum"] == ["schedule", "remind"]
    assert out["intents"] == ["schedule"] and [c["name"] for c in out["tool_calls"]] == ["calendar_query"]
    route = next(e for e in events if e["kind"] == "route")
    assert route["first"] == [{"intent": "schedule", "confidence": 0.3, "slots": {}, "missing": ["date"]}]
    assert route["intents"] == [{"intent": "schedule", "confidence": 1.0, "slots": {"date": "2026-12-07"},
                                 "missing": []}] and route["asked"] == 2


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # pushed elicitation, or an input-required round
@pytest.mark.slow
async def test_a_missing_required_slot_is_asked_for_with_a_form_and_the_run_goes_on(tmp_path, mode):
    asked: list[dict[str, Any]] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.requested_schema)
        return types.ElicitResult(action="accept", content={"time": "17:00"})

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode=mode, elicitation_callback=on_elicit) as host:
            out = await run(host, "remind me about the call")
    assert asked == [{"type": "object", "properties": {"time": {"type": "string", "title": "time", "maxLength": 500}},
                      "required": ["time"]}]
    assert (out["stop_reason"], out["intents"]) == ("answered", ["remind"])
    assert out["tool_calls"][0]["name"] == "reminders_send_reminder"


@pytest.mark.parametrize("fallback", ["ask", "stop"])
@pytest.mark.slow
async def test_without_a_host_that_can_ask_the_run_ends_with_needs_input_and_the_question(tmp_path, fallback):
    async with Hub.from_file(write_hub(tmp_path, fallback)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:  # no elicitation: it cannot ask
            vague = await run(host, "do the thing")
            short = await run(host, "remind me about the call")
    assert (vague["stop_reason"], vague["tool_calls"], vague["rounds"]) == ("needs_input", [], 0)
    assert vague["answer"].startswith("I am not sure what you want (my best guess: schedule at 0.30). Which of these "
                                      "do you mean? schedule: look at or change the calendar; 查看或安排日程; remind:")
    assert (short["stop_reason"], short["answer"]) == (
        "needs_input", "I need more to go on: to remind I need time. Tell me and ask again.")


@pytest.mark.slow
async def test_fallback_best_goes_on_with_the_best_guess_and_tells_the_model_what_is_missing(tmp_path):
    async with Hub.from_file(write_hub(tmp_path, "best")) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            out = await run(host, "do the thing")
            events = await trace(host, out["run_id"])
            prompt = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"], "prompt": True})
                      ).structured_content["events"]
    assert out["intents"] == ["schedule"] and [c["name"] for c in out["tool_calls"]] == ["calendar_query"]
    assert next(e for e in events if e["kind"] == "route")["best_guess"] is True
    system = next(e for e in prompt if e["kind"] == "request")["prompt"]["instructions"]
    assert "1. schedule (look at or change the calendar; 查看或安排日程); slots: none; not given: date" in system
    assert "when unsure which tool fits, use calendar_query" in system
