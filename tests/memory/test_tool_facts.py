"""What tools did is remembered: the judge reads a session's tool calls and results (cut to size) beside
what was said, and the durable fact among them (a reminder created for 10:00 tomorrow) becomes a memory
whose source is the call and its result, found later by recall. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from tests.postgres import new_database

pytestmark = pytest.mark.anyio
REMINDER = "The user has a reminder to call Ana at 10:00 on 2026-12-02"
RULES = [  # the judge's request holds the tool round as the judge reads it, result cut to size
    {"when": r"assistant called reminders_create\(\{\"title\": \"call Ana\".*\nm3 \[[^]]+\] tool result: "
             r"created reminder rem_7 for 2026-12-02T10:00 x{500,599} …\n",
     "json": {"decisions": [{"action": "ADD", "text": REMINDER, "kind": "plan", "confidence": 0.9,
                             "event_time": "2026-12-02", "sources": ["m2", "m3"], "reason": "a reminder was created"}]}},
    {"json": {"decisions": []}},
]


@pytest.fixture(params=["sqlite", "postgres"])
async def hub(request, tmp_path):
    url = f"sqlite:///{tmp_path}/hub.db" if request.param == "sqlite" else await new_database(
        request.getfixturevalue("pg_server"))
    (tmp_path / "judge.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": url}, "memory": {"embedder": "none"},
                               "agent": {"provider": "scripted", "script": "judge.json"}}))
    async with Hub.from_file(cfg) as h:
        yield h


async def ok(host: Client, tool: str, args: dict[str, Any]) -> Any:
    r = await host.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content


async def test_a_reminder_a_tool_created_becomes_a_memory_with_the_call_and_result_as_its_source(hub):
    async with hub.client() as host:
        with anyio.fail_after(60):
            made = await ok(host, "hermes_session_import", {"title": "errands", "messages": [
                {"role": "user", "content": "Remind me to call Ana tomorrow at ten"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "name": "reminders_create", "arguments": {"title": "call Ana",
                                                                           "at": "2026-12-02T10:00:00+01:00"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "created reminder rem_7 for 2026-12-02T10:00 "
                                                                  + "x" * 5000},
                {"role": "assistant", "content": "Done: I will remind you at 10:00."}]})
            page = await ok(host, "hermes_session_history", {"session_id": made["session_id"]})
            await hub.memories.wait_idle()
            listed = await ok(host, "hermes_memory_list", {})
            found = await ok(host, "hermes_memory_recall", {"query": "when do I call Ana?", "sources": ["memories"]})
    ids = [m["message_id"] for m in page["messages"]]
    [memory] = listed["memories"]
    assert (memory["text"], memory["kind"]) == (REMINDER, "plan")
    assert memory["source"]["type"] == "extracted" and memory["source"]["message_ids"] == ids[1:3]
    assert found["items"][0]["memory_id"] == memory["memory_id"]
    assert found["items"][0]["provenance"]["message_ids"] == ids[1:3]
