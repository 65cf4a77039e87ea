"""The tool calls of one model turn through a served hub: calls that change nothing run at once, the rest
one by one in the model's order, with the person's confirmation where it is required; a tool that found
nothing is named as such to the model."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.core.agent.profiles import resolve
from hermes_hub.infra.config import parse_config
from tests.support import serve_process, toy

pytestmark = pytest.mark.anyio

ROUNDING = 0.001  # seconds: the trace's times are rounded; the calls sleep 0.4 s


def sleep(seconds: float) -> dict[str, Any]:
    return {"name": "toy_sleep", "arguments": {"seconds": seconds}}


RULES = [  # different lengths: three equal results in a row would end the run (the repeat breaker)
    {"when": "look at three things", "tool_calls": [sleep(0.4), sleep(0.41), sleep(0.42)]},
    {"when": "sleep then echo", "tool_calls": [sleep(0.4), sleep(0.41), {"name": "toy_echo",
                                                                          "arguments": {"text": "after"}}]},
    {"when": "after", "text": "Slept, then echoed."},
    {"when": "slept 0.4", "text": "All three looked at."},
    {"when": "find my notes", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "[]"}},
                                             {"name": "toy_echo", "arguments": {"text": ""}}]},
    {"when": "nothing was found for this call", "text": "I found nothing."},
]


def config(tmp_path, **agent: Any) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    return {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "agent": {"provider": "scripted", "script": "model.json", **agent}}


async def tool_events(host: Client, task: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = (await host.call_tool("hermes_agent_run", {"task": task})).structured_content
    trace = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
    return out, [e for e in trace["events"] if e["kind"] == "tool"]


def overlapping(events: list[dict[str, Any]]) -> bool:
    return max(e["started"] for e in events) < min(e["started"] + e["seconds"] for e in events)


def one_after_another(events: list[dict[str, Any]]) -> bool:
    # the trace rounds to 0.1 ms, and the next call starts within microseconds of the last one's end
    return all(b["started"] >= a["started"] + a["seconds"] - ROUNDING for a, b in zip(events, events[1:]))


@pytest.mark.slow
async def test_calls_allowed_by_parallel_tools_run_at_once_and_the_others_one_by_one(tmp_path):
    async with serve_process(config(tmp_path, parallel_tools=["toy_sleep"]), tmp_path) as served:
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host:
                together, parallel = await tool_events(host, "look at three things")
                mixed, events = await tool_events(host, "sleep then echo")
    assert together["answer"] == "All three looked at." and len(parallel) == 3
    assert overlapping(parallel)
    assert [e["name"] for e in events] == ["toy_sleep", "toy_sleep", "toy_echo"]  # the model's order
    assert overlapping(events[:2]) and events[2]["started"] >= max(e["started"] + e["seconds"] for e in events[:2]) - ROUNDING
    assert mixed["answer"] == "Slept, then echoed."


@pytest.mark.slow
async def test_calls_that_may_change_things_run_one_by_one(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served:  # toy's tools carry no readOnlyHint
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host:
                out, events = await tool_events(host, "look at three things")
    assert out["answer"] == "All three looked at." and len(events) == 3
    assert one_after_another(events)


@pytest.mark.slow
async def test_an_empty_list_or_text_tells_the_model_plainly_that_nothing_was_found(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served:
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host:
                out = (await host.call_tool("hermes_agent_run", {"task": "find my notes"})).structured_content
                history = (await host.call_tool("hermes_session_history", {"session_id": out["session_id"]})
                           ).structured_content["messages"]
    tool_messages = [m["content"] for m in history if m["role"] == "tool"]
    assert out["answer"] == "I found nothing."
    assert [t.split(":")[0] for t in tool_messages] == ["The tool returned no data (an empty list)",
                                                        "The tool returned no data (an empty result)"]
    assert all("Tell the person nothing was found" in t for t in tool_messages)
    assert not any(c["is_error"] for c in out["tool_calls"])  # empty is not an error


def test_read_only_tools_may_overlap_and_confirmed_or_listed_tools_follow_the_profile():
    profile = resolve(parse_config({"agent": {"parallel_tools": ["calendar_*"], "confirm": ["mail_send"]}}), "default")
    assert profile.may_overlap("files_read", read_only=True)
    assert profile.may_overlap("calendar_query", read_only=False)
    assert not profile.may_overlap("mail_send", read_only=False)
    assert profile.needs_confirmation("mail_send", destructive=False)
