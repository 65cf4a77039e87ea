"""Per-request tool routing: past ``agent.max_tools`` allowed tools, a run offers the model the tools
search finds for its task, through MCP with the scripted model and the demo servers."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from tests.support import demo

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
RULES = [
    {"when": "rem-\\d", "text": "Reminder set."},  # the tool's result (it repeats the task's words)
    {"when": "call the bank", "tool_calls": [{"name": "reminders_send_reminder", "arguments": {
        "content": "call the bank", "time": "2026-12-02T09:00:00+01:00"}}]},
    {"when": "shopping list", "tool_calls": [{"name": "reminders_send_reminder", "arguments": {
        "content": "eggs", "time": "2026-12-02T09:00:00+01:00"}}]},
    {"when": "Unknown tool 'reminders_send_reminder'", "text": "I was not given that tool."},
]


def write_hub(tmp_path, max_tools: int) -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {m: demo(m, tmp_path / "demo") for m in ("calendar", "reminders", "notes")},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
        "agent": {"provider": "scripted", "script": "model.json", "max_tools": max_tools}}))
    return str(cfg)


async def budget_of(host: Client, run_id: str) -> dict:
    trace = (await host.call_tool("hermes_trace_get", {"run_id": run_id})).structured_content
    return next(e for e in trace["events"] if e["kind"] == "budget")


async def test_past_max_tools_a_run_offers_the_tools_found_for_its_task_and_can_call_them(tmp_path):
    async with Hub.from_file(write_hub(tmp_path, max_tools=3)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            with anyio.fail_after(60):
                found = (await host.call_tool("hermes_agent_run", {
                    "task": "remind me tomorrow morning to call the bank"})).structured_content
                missed = (await host.call_tool("hermes_agent_run", {
                    "task": "jot down the shopping list"})).structured_content
                found_budget, missed_budget = await budget_of(host, found["run_id"]), await budget_of(host, missed["run_id"])
    assert found["answer"] == "Reminder set." and not found["tool_calls"][0]["is_error"]
    assert (found_budget["tools_offered"], missed_budget["tools_offered"]) == (3, 3)
    assert found_budget["tools_allowed"] > 20
    assert missed["answer"] == "I was not given that tool."  # the notes tools were offered instead


async def test_within_max_tools_a_run_offers_every_allowed_tool(tmp_path):
    async with Hub.from_file(write_hub(tmp_path, max_tools=60)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            with anyio.fail_after(60):
                out = (await host.call_tool("hermes_agent_run", {"task": "jot down the shopping list"})
                       ).structured_content
                budget = await budget_of(host, out["run_id"])
    assert budget["tools_offered"] == budget["tools_allowed"] > 20
    assert out["answer"] == "Reminder set."
