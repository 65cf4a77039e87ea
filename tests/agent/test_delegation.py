"""Delegation (issue 21): a profile's delegates are offered to its model as tools; each call is a child run of
that profile, with the caller's identity and never more than the caller's run may reach, to a bounded depth;
child and parent name each other in their traces. Through an MCP host, scripted model."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from tests.support import demo

pytestmark = pytest.mark.anyio

MONDAY = {"name": "calendar_query", "arguments": {"start_date": "2026-12-07", "end_date": "2026-12-07"}}
RULES = [
    {"when": "^check Monday and book the review$", "tool_calls": [
        {"name": "delegate_calendar_agent", "arguments": {"task": "book the review on 2026-12-07"}}]},
    {"when": "^book the review on 2026-12-07$", "tool_calls": [
        {"name": "calendar_create_event", "arguments": {"title": "Review", "date": "2026-12-07"}}]},
    {"when": "Unknown tool 'calendar_create_event'", "tool_calls": [MONDAY]},
    {"when": '"events"', "text": "Monday is free; I may not create events."},
    {"when": "The 'calendar_agent' agent \\(answered", "text": "Done through the calendar agent: Monday is free."},
]


def write_hub(tmp_path, depth: int) -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {name: demo(name, tmp_path / "data") for name in ("calendar", "reminders", "notes")},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {
            "assistant": {"instructions": "You help with the week.", "tools": {"allow": ["reminders_*", "calendar_query"]},
                          "delegates": ["calendar_agent", "notes_agent"], "max_delegation_depth": depth},
            "calendar_agent": {"instructions": "You look after the calendar.", "tools": {"allow": ["calendar_*"]},
                               "delegates": ["notes_agent"]},
            "notes_agent": {"instructions": "You keep notes.", "tools": {"allow": ["notes_*"]}}},
    }))
    return str(cfg)


def offered(trace: list[dict[str, Any]]) -> list[str]:
    first = next(e for e in trace if e["kind"] == "request")
    return sorted(t["name"] for t in first["prompt"]["tools"])


@pytest.mark.parametrize("depth, child_delegates", [(2, ["delegate_notes_agent"]), (1, [])])
@pytest.mark.slow
async def test_a_delegated_run_is_a_child_run_within_its_callers_permissions_and_depth(tmp_path, depth,
                                                                                       child_delegates):
    async with Hub.from_file(write_hub(tmp_path, depth)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            with anyio.fail_after(60):
                out = (await host.call_tool("hermes_agent_run", {"task": "check Monday and book the review",
                                                                 "profile": "assistant"})).structured_content
                runs = (await host.call_tool("hermes_trace_list", {})).structured_content["runs"]
                traces = {r["run_id"]: (await host.call_tool("hermes_trace_get", {"run_id": r["run_id"], "prompt": True})
                                        ).structured_content for r in runs}
                audit = (await host.call_tool("hermes_audit_query", {"tool": "calendar_query"})).structured_content
    assert (out["answer"], out["stop_reason"]) == ("Done through the calendar agent: Monday is free.", "answered")
    assert [c["name"] for c in out["tool_calls"]] == ["delegate_calendar_agent"]
    parent = traces[out["run_id"]]
    [child_id] = [r for r in traces if r != out["run_id"]]
    child = traces[child_id]
    assert child["profile"] == "calendar_agent" and child["task"] == "book the review on 2026-12-07"
    assert next(e for e in child["events"] if e["kind"] == "delegated") | {"at": 0} == {
        "at": 0, "kind": "delegated", "parent_run_id": out["run_id"], "depth": 1}
    delegation = next(e for e in parent["events"] if e["kind"] == "delegation")
    assert (delegation["child_run_id"], delegation["profile"], delegation["stop_reason"]) == (
        child_id, "calendar_agent", "answered")
    # the caller may reach calendar_query only: the child is offered no more, whatever its own profile allows
    assert offered(child["events"]) == ["calendar_query", *child_delegates]
    assert offered(parent["events"]) == ["calendar_query", "delegate_calendar_agent", "delegate_notes_agent",
                                         "reminders_list_reminders", "reminders_send_reminder"]
    assert [c["name"] for c in child["events"] if c["kind"] == "tool"] == ["calendar_create_event", "calendar_query"]
    assert next(e for e in child["events"] if e["kind"] == "tool")["outcome"] == "error"  # refused: not offered
    assert [c["user_id"] for c in audit["calls"]] == [hub.local.user_id]  # with the caller's identity
    assert audit["calls"][0]["run_id"] == child_id


def test_a_delegate_that_names_no_profile_or_the_profile_itself_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        parse_config({"agents": {"a": {"delegates": ["b", "a"]}}}, env={})
    text = str(e.value)
    assert "agents.a.delegates[0]" in text and "no agent profile 'b'; the profiles are: a, default" in text
    assert "agents.a.delegates[1]" in text and "a profile cannot delegate to itself" in text
