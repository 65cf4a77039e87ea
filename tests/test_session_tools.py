"""The hermes_session_* tools through the hub's MCP surface (local user, in-process host)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.config import parse_config

pytestmark = pytest.mark.anyio


@pytest.fixture
async def host():
    async with Hub(parse_config({"mcpServers": {}, "hub": {"own_tools": "all"}})) as hub, hub.client() as client:
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


LOCOMO_STYLE = [  # a conversation brought from elsewhere: times out of order, one missing, Chinese
    {"role": "user", "content": "I moved to Oslo last week", "created_at": "2023-05-08T13:56:00+02:00"},
    {"role": "assistant", "content": "How is the weather there?", "created_at": "2023-05-08T11:57:00Z"},
    {"role": "user", "content": "我们明天去北京开会"},
    {"role": "user", "content": "sent before everything else", "created_at": "2023-05-08 09:00:00"},
]


async def test_an_imported_conversation_round_trips_with_its_times_and_order(host):
    err, made = await call(host, "import", {"title": "From my old app", "messages": LOCOMO_STYLE})
    assert not err and made == {"session_id": made["session_id"], "messages": 4}
    _, page = await call(host, "history", {"session_id": made["session_id"]})
    assert [(m["seq"], m["content"], m["created_at"]) for m in page["messages"]] == [
        (1, "I moved to Oslo last week", "2023-05-08T11:56:00Z"),
        (2, "How is the weather there?", "2023-05-08T11:57:00Z"),
        (3, "我们明天去北京开会", "2023-05-08T11:57:00Z"),  # no time given: the one before's
        (4, "sent before everything else", "2023-05-08T09:00:00Z"),
    ]
    _, listed = await call(host, "list")
    (session,) = listed["sessions"]
    assert (session["title"], session["created_at"], session["updated_at"], session["message_count"]) == \
        ("From my old app", "2023-05-08T09:00:00Z", "2023-05-08T11:57:00Z", 4)
    _, found = await call(host, "search", {"query": "北京开会"})
    assert [(r["session_id"], r["created_at"]) for r in found["results"]] == [(made["session_id"],
                                                                               "2023-05-08T11:57:00Z")]


async def test_append_with_created_at_keeps_when_the_message_was_said(host):
    _, s = await call(host, "create", {})
    err, said = await call(host, "append", {"session_id": s["session_id"], "role": "user", "content": "昨天下雨了",
                                            "created_at": "2023-05-07T22:15:00+08:00"})
    assert not err and (said["seq"], said["created_at"]) == (1, "2023-05-07T14:15:00Z")
    tool = next(t for t in (await host.list_tools()).tools if t.name == "hermes_session_append")
    assert "when the message was said" in tool.description


async def test_a_malformed_created_at_is_refused_with_what_to_write_and_nothing_is_stored(host):
    _, s = await call(host, "create", {})
    err, text = await call(host, "append", {"session_id": s["session_id"], "role": "user", "content": "x",
                                            "created_at": "last Tuesday at noon, give or take a few hours or so"})
    assert err and text == ("created_at 'last Tuesday at noon, give or take a few…' is not an ISO 8601 time; write "
                            "it like '2023-05-07T14:30:00+02:00' or '2023-05-07T12:30:00Z' (without an offset it "
                            "is read as UTC; a date alone means its midnight)")
    bad = [*LOCOMO_STYLE[:2], {"role": "user", "content": "y", "created_at": "07/05/2023"}]
    err, text = await call(host, "import", {"title": "t", "messages": bad})
    assert err and text.startswith("messages[2]: created_at '07/05/2023' is not an ISO 8601 time; write it like")
    _, history = await call(host, "history", {"session_id": s["session_id"]})
    _, listed = await call(host, "list")
    assert history["messages"] == [] and [x["session_id"] for x in listed["sessions"]] == [s["session_id"]]


async def test_an_import_over_the_limit_is_refused_with_the_fix_and_the_largest_one_is_taken(host):
    many = [{"role": "user" if i % 2 else "assistant", "content": f"turn {i}",
             "created_at": f"2023-05-07T10:{i // 600:02d}:{i % 60:02d}Z"} for i in range(5001)]
    with anyio.fail_after(60):
        err, text = await call(host, "import", {"title": "too long", "messages": many})
    assert err and text == ("5,001 messages is more than one import takes (5,000); split the conversation into "
                            "several imports, or import the first 5,000 and add the rest to that session with "
                            "hermes_session_append")
    _, listed = await call(host, "list")
    assert listed["sessions"] == []
    with anyio.fail_after(60):
        err, made = await call(host, "import", {"title": "just fits", "messages": many[:5000]})
    assert not err and made["messages"] == 5000
    _, last = await call(host, "history", {"session_id": made["session_id"], "limit": 1, "newest_first": True})
    assert [(m["seq"], m["content"]) for m in last["messages"]] == [(5000, "turn 4999")]


async def test_a_message_the_schema_refuses_fails_the_whole_import(host):
    bad = [LOCOMO_STYLE[0], {"role": "robot", "content": "beep"}]
    err, text = await call(host, "import", {"title": "t", "messages": bad})
    assert err and "'messages[1].role': 'robot' is not one of" in text
    _, listed = await call(host, "list")
    assert listed["sessions"] == []


async def test_another_user_cannot_see_an_imported_session(host):
    hub: Hub = host.hub  # type: ignore[attr-defined]
    _, made = await call(host, "import", {"title": "private", "messages": LOCOMO_STYLE})
    eve = CallContext(Identity("eve"))

    async def as_eve(tool: str, args: dict[str, Any]) -> Any:
        r = await hub.catalog.call_tool(f"hermes_session_{tool}", args, eve)
        return r.content[0].text if r.is_error else r.structured_content

    assert (await as_eve("list", {}))["sessions"] == []
    assert (await as_eve("search", {"query": "北京开会"}))["results"] == []
    assert "not found" in await as_eve("history", {"session_id": made["session_id"]})
    _, mine = await call(host, "history", {"session_id": made["session_id"]})
    assert len(mine["messages"]) == 4
