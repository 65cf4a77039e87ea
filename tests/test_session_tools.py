"""The hermes_session_* tools through the hub's MCP surface (local user, in-process host)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.config import parse_config

pytestmark = pytest.mark.anyio


@pytest.fixture
async def host():
    async with Hub(parse_config({"mcpServers": {}})) as hub, Client(hub.server) as client:
        client.hub = hub  # type: ignore[attr-defined]
        yield client


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> tuple[bool, Any]:
    r = await client.call_tool(f"hermes_session_{tool}", args or {})
    return r.is_error, (r.content[0].text if r.is_error else r.structured_content)


async def test_a_conversation_with_tool_calls_is_kept_and_paged_in_order(host):
    _, s = await call(host, "create", {"title": "Weekend"})
    sid = s["session_id"]
    turns = [
        {"role": "user", "content": "What's on Saturday?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "calendar_query",
                                                             "arguments": {"start_date": "2026-12-05"}}]},
        {"role": "tool", "content": "{\"events\": []}", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Nothing yet."},
    ]
    for t in turns:
        err, _ = await call(host, "append", {"session_id": sid, **t})
        assert not err
    _, first = await call(host, "history", {"session_id": sid, "limit": 3})
    _, rest = await call(host, "history", {"session_id": sid, "limit": 3, "cursor": first["next_cursor"]})
    messages = first["messages"] + rest["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"] == [{"id": "c1", "name": "calendar_query",
                                          "arguments": {"start_date": "2026-12-05"}}]
    assert messages[2]["tool_call_id"] == "c1" and rest["next_cursor"] is None
    transcript = (await host.read_resource(f"hub://hermes/sessions/{sid}")).contents[0].text
    assert "Nothing yet." in transcript


async def test_search_finds_chinese_and_english_with_snippets(host):
    _, s = await call(host, "create", {"title": "Plans"})
    for text in ("我们明天去北京开会", "Quarterly budget review on Monday"):
        await call(host, "append", {"session_id": s["session_id"], "role": "user", "content": text})
    _, zh = await call(host, "search", {"query": "北京开会"})
    _, en = await call(host, "search", {"query": "budget"})
    assert [r["snippet"] for r in zh["results"]] == ["我们明天去**北京开会**"]
    assert "**budget**" in en["results"][0]["snippet"]


async def test_bad_inputs_come_back_as_errors_a_model_can_act_on(host):
    _, s = await call(host, "create", {})
    sid = s["session_id"]
    bad_role = await host.call_tool("hermes_session_append", {"session_id": sid, "role": "robot", "content": "x"})
    assert bad_role.is_error and "'robot' is not one of ['system', 'user', 'assistant', 'tool']" in \
        bad_role.content[0].text
    err, orphan = await call(host, "append", {"session_id": sid, "role": "tool", "content": "42"})
    assert err and "tool_call_id" in orphan
    err, huge = await call(host, "append", {"session_id": sid, "role": "user", "content": "x" * 300_000})
    assert err and "the limit is 262,144. Split it into several messages" in huge
    err, unknown = await call(host, "history", {"session_id": "ses_nope"})
    assert err and "not found" in unknown
    _, history = await call(host, "history", {"session_id": sid})
    assert history["messages"] == []  # nothing half-written


async def test_a_second_writer_on_a_busy_session_is_refused_at_once(host):
    hub: Hub = host.hub  # type: ignore[attr-defined]
    _, s = await call(host, "create", {})
    async with hub.sessions.lock(hub.local.user_id, s["session_id"]):
        with anyio.fail_after(2):
            err, text = await call(host, "append", {"session_id": s["session_id"], "role": "user", "content": "x"})
    assert err and "busy" in text.lower()


async def test_many_concurrent_appends_are_all_kept(host):
    _, s = await call(host, "create", {})

    async def writer(i: int) -> None:
        for j in range(5):
            await call(host, "append", {"session_id": s["session_id"], "role": "user", "content": f"{i}-{j}"})

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(writer, i)
    _, page = await call(host, "history", {"session_id": s["session_id"], "limit": 100})
    assert sorted(m["content"] for m in page["messages"]) == sorted(f"{i}-{j}" for i in range(8) for j in range(5))
    assert [m["seq"] for m in page["messages"]] == list(range(1, 41))


async def test_delete_all_needs_confirmation_and_removes_only_mine(host):
    await call(host, "create", {"title": "a"})
    await call(host, "create", {"title": "b"})
    refused = await host.call_tool("hermes_session_delete_all", {})
    _, done = await call(host, "delete_all", {"confirm": True})
    _, left = await call(host, "list")
    assert refused.is_error and "'confirm' is a required property" in refused.content[0].text
    assert done == {"deleted": 2} and left["sessions"] == []
