"""Plans that are revised (issue 21): a ``"plan": true`` profile plans first, works step by step with the
plan in its instructions, and a result that contradicts what the plan assumed changes the rest of it; the
plan and each revision are in the trace and in progress messages. Through an MCP host, scripted model."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from hermes_hub import Hub
from tests.support import Progress, demo

pytestmark = pytest.mark.anyio

TASK = "set a reminder before my first meeting on Monday 2026-12-07"
MONDAY = {"name": "calendar_query", "arguments": {"start_date": "2026-12-07", "end_date": "2026-12-07"}}
RULES = [
    {"when": "^Plan this task:\n" + TASK, "json": {"steps": [
        {"id": 1, "purpose": "find Monday's first meeting", "tool": "calendar_query", "depends_on": []},
        {"id": 2, "purpose": "set a reminder 15 minutes before it", "tool": "reminders_send_reminder",
         "depends_on": [1]},
        {"id": 3, "purpose": "tell the person", "tool": None, "depends_on": [2]},
        {"id": 4, "purpose": "one step too many", "tool": None}]}},
    {"when": '^Plan revision:\n(?s:.*)"events": \\[\\]', "json": {
        "steps": [{"id": 2, "purpose": "tell the person Monday has no meetings, so no reminder is needed",
                   "tool": None, "depends_on": [1]}],
        "reason": "Monday has no meetings: there is nothing to remind before",
        "used": {"result": "calendar_query", "over": "the plan's assumption", "why": "newer and more specific"}}},
    {"task": "^" + TASK + "$", "when": "^" + TASK + "$", "tool_calls": [MONDAY]},
    {"task": "^" + TASK + "$", "when": '"events": \\[\\]', "text": "Monday 2026-12-07 has no meetings, so I set no reminder."},
]


def write_hub(tmp_path) -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {name: demo(name, tmp_path / "data") for name in ("calendar", "reminders")},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {"planner": {"plan": True, "max_plan_steps": 3}},
    }))
    return str(cfg)


async def test_a_plan_is_revised_when_a_result_contradicts_it_and_the_trace_shows_both(tmp_path):
    progress = Progress()

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            with anyio.fail_after(60):
                out = (await host.call_tool("hermes_agent_run", {"task": TASK, "profile": "planner"},
                                            progress_callback=progress)).structured_content
                trace: list[dict[str, Any]] = (await host.call_tool(
                    "hermes_trace_get", {"run_id": out["run_id"], "prompt": True})).structured_content["events"]
    assert (out["answer"], out["stop_reason"]) == ("Monday 2026-12-07 has no meetings, so I set no reminder.", "answered")
    assert [c["name"] for c in out["tool_calls"]] == ["calendar_query"]  # the reminder step was dropped
    plan = next(e for e in trace if e["kind"] == "plan")
    assert [s["purpose"] for s in plan["steps"]] == ["find Monday's first meeting", "set a reminder 15 minutes before it",
                                                     "tell the person"]  # at most max_plan_steps
    assert plan["steps"][1] == {"id": 2, "purpose": "set a reminder 15 minutes before it",
                                "tool": "reminders_send_reminder", "depends_on": [1]}
    revision = next(e for e in trace if e["kind"] == "plan_revision")
    assert (revision["revised"], revision["done"], revision["round"]) == (True, [1], 1)
    assert revision["reason"] == "Monday has no meetings: there is nothing to remind before"
    assert revision["used"]["result"] == "calendar_query"  # which result the run went by
    requests = [e for e in trace if e["kind"] == "request"]
    assert "- 2. set a reminder 15 minutes before it (tool: reminders_send_reminder)" in requests[0]["prompt"]["instructions"]
    second = requests[1]["prompt"]["instructions"]
    assert "- done: 1. find Monday's first meeting" in second and "reminders_send_reminder" not in second.split(
        "Your plan")[1]
    assert "prefer the newer and the more specific source" in second
    assert progress[0].startswith("plan: 1. find Monday's first meeting; 2. set a reminder")
    assert any(p.startswith("plan revised: Monday has no meetings") for p in progress)
