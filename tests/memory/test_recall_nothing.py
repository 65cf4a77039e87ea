"""Recall leaves out messages with nothing in them (issue 33 item 7): an assistant turn that only called a tool,
and a tool result whose data holds no items, would take a place of the answer without saying anything."""

from __future__ import annotations

import anyio
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config

pytestmark = pytest.mark.anyio


async def test_blank_turns_and_empty_results_are_not_recalled(tmp_path):
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}})
    async with Hub(config) as hub, hub.client() as host:
        sid = (await host.call_tool("hermes_session_create", {"title": "dentist"})).structured_content["session_id"]
        for message in (
                {"role": "user", "content": "any reminders about the dentist?"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "reminders_list",
                                                                     "arguments": {"query": "dentist"}}]},
                {"role": "tool", "content": '{"reminders": []}', "tool_call_id": "c1"},
                {"role": "tool", "content": '{"items": [], "total": 0, "query": ""}', "tool_call_id": "c1"},
                {"role": "tool", "content": '{"reminders": [{"text": "dentist on Friday"}]}', "tool_call_id": "c1"},
                {"role": "assistant", "content": "You have one dentist reminder, on Friday."}):
            await host.call_tool("hermes_session_append", {"session_id": sid, **message})
        with anyio.fail_after(120):
            await hub.memories.indexer.drain()
        found = await host.call_tool("hermes_memory_recall", {"query": "dentist reminders", "sources": ["sessions"],
                                                              "limit": 10})
    texts = [item["text"] for item in found.structured_content["items"]]
    assert "You have one dentist reminder, on Friday." in texts
    assert '{"reminders": [{"text": "dentist on Friday"}]}' in texts  # a result with something in it stays
    assert not any(t.strip() in ("", '{"reminders": []}') or '"items": []' in t for t in texts), texts
