"""The hub in-process over real stdio children, seen by SDK clients of both protocol eras."""

from __future__ import annotations

import logging
import re
import sys
import time
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import BUILTIN_TOOLS, OWN_LISTED, PROJECT, demo, toy, until

pytestmark = pytest.mark.anyio
ERAS = ["auto", "legacy"]


@asynccontextmanager
async def hub_of(servers: dict[str, Any], settle: bool = True, **hub: Any):
    async with Hub(parse_config({"mcpServers": servers, "hub": hub})) as h:
        if settle:
            with anyio.fail_after(30):
                assert await h.wait_settled(30)
        yield h


@pytest.fixture
async def demo_hub(tmp_path):
    servers = {name: demo(name, tmp_path) for name in ("calendar", "reminders", "notes")}
    async with hub_of(servers) as h:
        yield h


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_of_every_server_are_listed_with_their_prefix(demo_hub, mode):
    async with demo_hub.client(mode=mode) as host:
        tools = {t.name: t for t in (await host.list_tools()).tools}
    assert set(tools) == {
        *OWN_LISTED, "calendar_query", "calendar_create_event", "reminders_send_reminder",
        "reminders_list_reminders", "notes_create_note", "notes_search_notes",
    }
    assert tools["calendar_query"].meta["hermes-hub/origin"] == {"server": "calendar", "name": "query"}


@pytest.mark.parametrize("mode", ERAS)
async def test_calls_reach_the_right_server_with_its_own_tool_name(demo_hub, mode):
    async with demo_hub.client(mode=mode) as host:
        made = await host.call_tool("calendar_create_event", {"title": "Dentist", "date": "2026-12-03"})
        found = await host.call_tool("calendar_query", {"start_date": "2026-12-01", "end_date": "2026-12-31"})
    assert not made.is_error
    assert [e["title"] for e in found.structured_content["events"]] == ["Dentist"]


async def test_arguments_that_break_the_schema_come_back_as_a_tool_error_naming_the_field(demo_hub):
    async with demo_hub.client() as host:
        result = await host.call_tool("calendar_query", {"start_date": 20261201})
    text = result.content[0].text
    assert result.is_error
    assert "Invalid arguments for tool 'calendar_query'" in text
    assert "'start_date': 20261201 is not of type 'string'" in text
    assert "'end_date' is a required property" in text


async def test_a_tool_error_from_the_server_passes_through_unchanged(demo_hub):
    async with demo_hub.client() as host:
        result = await host.call_tool("reminders_send_reminder", {"content": "x", "time": "2026-12-01T09:00"})
    assert result.is_error
    assert "timezone" in result.content[0].text.lower()


async def test_an_unknown_tool_is_a_protocol_error_that_says_where_to_look(demo_hub):
    async with demo_hub.client() as host:
        with pytest.raises(MCPError) as err:
            await host.call_tool("calendar_nope", {})
    assert err.value.code == types.INVALID_PARAMS
    assert "unknown tool 'calendar_nope'" in err.value.message


@pytest.mark.parametrize("mode", ERAS)
async def test_resources_templates_prompts_and_completions_are_routed(demo_hub, mode):
    async with demo_hub.client(mode=mode) as host:
        await host.call_tool("notes_create_note", {"title": "Groceries", "body": "milk, eggs"})
        await anyio.sleep(0)
        resources = [r.uri for r in (await host.list_resources()).resources]
        templates = [t.uri_template for t in (await host.list_resource_templates()).resource_templates]
        read = await host.read_resource("notes://notes/note/groceries")
        prompt = await host.get_prompt("notes_summarize_note", {"note_id": "groceries"})
        done = await host.complete(types.PromptReference(type="ref/prompt", name="notes_summarize_note"),
                                   {"name": "note_id", "value": "gro"})
        done_tpl = await host.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="notes://notes/note/{id}"),
            {"name": "id", "value": "g"})
    assert "hub://hermes/status" in resources
    assert templates == ["hub://hermes/sessions/{session_id}", "hub://hermes/sessions/{session_id}/working",
                         "hub://hermes/memory/{memory_id}",
                         "hub://hermes/traces/{run_id}", "hub://hermes/artifacts/{artifact_id}",
                         "hub://hermes/documents/{document_id}", "notes://notes/note/{id}"]
    assert read.contents[0].uri == "notes://notes/note/groceries"
    assert "milk, eggs" in read.contents[0].text
    assert "milk, eggs" in prompt.messages[0].content.text
    assert done.completion.values == ["groceries"]
    assert done_tpl.completion.values == ["groceries"]


async def test_reading_a_resource_listed_after_start_goes_through_the_template(demo_hub):
    async with demo_hub.client() as host:
        await host.call_tool("notes_create_note", {"title": "Later", "body": "written after listing"})
        read = await host.read_resource("notes://notes/note/later")
    assert "written after listing" in read.contents[0].text


async def test_allow_and_deny_lists_filter_a_servers_tools(tmp_path):
    servers = {
        "notes": demo("notes", tmp_path, tools={"allow": ["*_note*"], "deny": ["search_*"]}),
        "calendar": demo("calendar", tmp_path, tools={"deny": ["create_*"]}),
    }
    async with hub_of(servers) as h, h.client() as host:
        names = {t.name for t in (await host.list_tools()).tools}
        with pytest.raises(MCPError):
            await host.call_tool("notes_search_notes", {"query": "x"})
    assert names == {*OWN_LISTED, "notes_create_note", "calendar_query"}


async def test_an_empty_prefix_serves_the_servers_own_names(tmp_path):
    async with hub_of({"cal": demo("calendar", tmp_path, prefix="")}) as h, h.client() as host:
        names = {t.name for t in (await host.list_tools()).tools}
        result = await host.call_tool("query", {"start_date": "2026-01-01", "end_date": "2026-01-02"})
    assert names == {*OWN_LISTED, "query", "create_event"}
    assert result.structured_content == {"events": []}


@pytest.mark.slow
async def test_a_name_collision_keeps_the_first_server_and_reports_the_loser_with_the_fix(tmp_path):
    servers = {"first": toy("--name", "first", prefix=""), "second": toy("--name", "second", prefix="")}
    async with hub_of(servers) as h, h.client() as host:
        result = await host.call_tool("whoami", {})
        status = (await host.call_tool("hermes_hub_status", {})).structured_content
    assert result.content[0].text == "first"
    clash = next(c for c in status["collisions"] if c["name"] == "whoami")
    assert clash == {"kind": "tool", "name": "whoami", "winner": "first", "loser": "second",
                     "fix": "set mcpServers.second.prefix to a unique value"}
    assert [s["state"] for s in status["servers"]] == ["READY", "READY"]


async def test_a_server_whose_command_does_not_exist_fails_with_a_fix_and_others_still_serve(tmp_path):
    servers = {"ghost": {"command": "no-such-mcp-server-binary"}, "notes": demo("notes", tmp_path)}
    async with hub_of(servers) as h, h.client() as host:
        status = (await host.call_tool("hermes_hub_status", {})).structured_content
        call = await host.call_tool("ghost_anything", {})
        ok = await host.call_tool("notes_search_notes", {"query": "x"})
    ghost = next(s for s in status["servers"] if s["name"] == "ghost")
    assert ghost["state"] == "FAILED"
    assert ghost["error"] == ("command 'no-such-mcp-server-binary' was not found on PATH; "
                              "check mcpServers.ghost.command in hub.json")
    assert call.is_error and "server 'ghost' is not ready (state FAILED)" in call.content[0].text
    assert not ok.is_error


async def test_a_server_that_exits_during_startup_reports_its_exit_code_and_last_stderr_line(tmp_path):
    async with hub_of({"broken": toy("--exit-after-start", "3")}) as h:
        conn = h.pool.connections["broken"]
        state, error = conn.state.value, conn.error
    assert state in ("RESTARTING", "STARTING")  # retried with backoff: see downstream/test_supervision.py
    assert "exit 3" in error
    assert "fatal: cannot open database (exit 3)" in error


@pytest.mark.slow
async def test_a_slow_server_does_not_block_the_others_and_its_calls_fail_fast_until_ready(tmp_path):
    servers = {"slow": toy("--start-delay", "3"), "notes": demo("notes", tmp_path)}
    changes: list[str] = []

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            changes.append("tools")

    async with hub_of(servers, settle=False) as h:
        with anyio.fail_after(20):
            await h.pool.wait_for(lambda: h.pool.connections["notes"].ready)
        assert h.pool.connections["slow"].state.value == "STARTING"
        async with h.client(mode="legacy", message_handler=on_message) as host:
            names = {t.name for t in (await host.list_tools()).tools}
            started = time.monotonic()
            early = await host.call_tool("slow_echo", {"text": "hi"})
            elapsed = time.monotonic() - started
            with anyio.fail_after(20):
                assert await h.wait_settled(20)
                await until(lambda: changes, timeout=None, every=0.02)  # the host's notice
            late = await host.call_tool("slow_echo", {"text": "hi"})
            names_after = {t.name for t in (await host.list_tools()).tools}
    assert "notes_create_note" in names and "slow_echo" not in names
    assert early.is_error and "server 'slow' is not ready (state STARTING)" in early.content[0].text
    assert elapsed < 0.5
    assert late.content[0].text == "hi"
    assert "slow_echo" in names_after


async def test_a_result_over_the_size_limit_is_cut_with_a_marker_stating_the_original_size(tmp_path):
    async with hub_of({"toy": toy()}, max_result_bytes=10_000) as h, h.client() as host:
        small = await host.call_tool("toy_big", {"size": 100})
        cut = await host.call_tool("toy_big", {"size": 50_000})  # the SDK client checks the output schema
    assert small.content[0].text == "x" * 100
    assert len(cut.model_dump_json(by_alias=True, exclude_none=True)) <= 10_000
    marker = cut.content[-1].text
    assert "result truncated" not in marker and "over the hub's limit of 10,000" in marker
    original = int(re.search(r"its result was ([\d,]+) bytes", marker).group(1).replace(",", ""))
    assert original > 50_000
    # The call succeeded, and the result says so: a model must not call it again.
    assert not cut.is_error and marker.startswith("[hermes-hub: The call succeeded (do not repeat it)")
    # The structured copy keeps its shape (a shorter string), so hosts that check the output schema accept it.
    assert set(cut.structured_content) == {"result"} and "x" * 1000 in cut.structured_content["result"]
    assert "characters from 1 string of the structured content" in marker


@pytest.mark.parametrize("mode", ERAS)
async def test_structured_content_and_progress_pass_through(tmp_path, mode):
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with hub_of({"toy": toy()}) as h, h.client(mode=mode) as host:
        added = await host.call_tool("toy_add", {"a": 2, "b": 3})
        counted = await host.call_tool("toy_count", {"to": 3}, progress_callback=progress)
    assert added.structured_content == {"total": 5}
    assert counted.content[0].text == "counted to 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_status_estimates_the_tokens_the_tool_list_costs(demo_hub):
    async with demo_hub.client() as host:
        status = (await host.call_tool("hermes_hub_status", {})).structured_content
        listed = (await host.read_resource("hub://hermes/status")).contents[0].text
    assert 300 < status["tool_list_tokens"] < 12_000
    assert status["totals"]["tools"] == 6 + len(BUILTIN_TOOLS)
    assert '"tool_list_tokens"' in listed


async def test_a_prefix_that_makes_names_too_long_for_hosts_is_warned_about_with_the_fix(tmp_path):
    async with hub_of({"notes": demo("notes", tmp_path, prefix="n" * 60)}) as h:
        warnings = h.status(h.local)["name_warnings"]
    assert any("is 72 characters long" in w and "set mcpServers.notes.prefix to something shorter" in w
               for w in warnings)


async def test_ready_means_every_page_of_tools_resources_and_prompts_was_listed():
    paged = {"command": sys.executable, "args": ["-m", "tests.fixtures.paged_server"], "cwd": str(PROJECT)}
    async with hub_of({"paged": paged}) as h, h.client() as host:
        tools = [t.name for t in (await host.list_tools()).tools]
        resources = [r.uri for r in (await host.list_resources()).resources]
        prompts = [p.name for p in (await host.list_prompts()).prompts]
        last = await host.call_tool("paged_t7", {})
    assert [t for t in tools if t not in BUILTIN_TOOLS] == [f"paged_t{i}" for i in range(8)]
    assert [r for r in resources if r.startswith("paged:")] == [f"paged://paged/r/{i}" for i in range(7)]
    assert prompts == [f"paged_p{i}" for i in range(5)]
    assert last.content[0].text == "called t7"


async def test_a_childs_stderr_goes_to_the_hub_log_prefixed_with_its_name(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="hermes_hub")
    async with hub_of({"chatty": toy("--name", "chatty")}) as h:
        tail = list(h.pool.connections["chatty"].link.stderr_tail)
    assert "toy server chatty starting" in tail
    assert "[chatty] toy server chatty starting" in caplog.text


@pytest.mark.parametrize("mode", ERAS)
async def test_an_http_request_that_skipped_the_hubs_authentication_is_refused_not_served_as_the_local_admin(
        tmp_path, mode):
    import uvicorn

    from tests.support import free_port, until

    async with hub_of({}) as hub:
        port = free_port()
        # The hub's server alone, without the app's bearer middleware: no request carries a caller.
        app = hub.server.streamable_http_app(streamable_http_path="/mcp")
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            with anyio.fail_after(10):
                await until(lambda: server.started, timeout=None, every=0.01)  # uvicorn has no event for it
            with anyio.fail_after(30):
                async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as host:
                    with pytest.raises(MCPError) as refused:
                        await host.list_tools()
                async with hub.client(mode=mode) as local:  # in-process, no HTTP request: the local user
                    listed = [t.name for t in (await local.list_tools()).tools]
            server.should_exit = True
    assert "hermes_memory_recall" in listed
    assert "carries no caller identity" in refused.value.message


@pytest.mark.parametrize("mode", ERAS)
async def test_an_in_process_client_nobody_named_is_refused_not_served_as_the_local_admin(mode):
    from mcp import Client

    from hermes_hub.infra.errors import HubError

    async with hub_of({}) as hub:
        with anyio.fail_after(30):
            async with Client(hub.server, mode=mode) as host:  # no acting_as: a transport without callers
                with pytest.raises(MCPError) as refused:
                    await host.call_tool("hermes_hub_status", {})
            async with hub.client(mode=mode) as local:  # the same server, the local user named
                status = (await local.call_tool("hermes_hub_status", {})).structured_content
        with pytest.raises(HubError, match="names no caller"):
            hub.identify(None)
    assert "names no caller" in refused.value.message
    assert "agent_runs" in status  # what only an admin is shown: the local user is one
