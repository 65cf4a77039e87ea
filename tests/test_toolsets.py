"""Toolsets: config errors name their key paths, and each endpoint hears list_changed for its own tools."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from click.testing import CliRunner
from mcp import Client

from hermes_hub.app.cli import main
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from hermes_hub.app.hub import Hub
from tests.support import demo, until

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]


def problems_of(raw: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    return e.value.problems


def test_a_toolset_naming_an_unknown_server_is_an_error_at_its_key_path_with_a_suggestion():
    problems = problems_of({"mcpServers": {"calendar": {"command": "x"}},
                            "toolsets": {"work": {"servers": ["calendar", "calender"]}}})
    assert problems == [("toolsets.work.servers[1]", "no server 'calender' in mcpServers; did you mean 'calendar'?")]


def test_a_toolset_name_that_is_not_url_safe_and_a_misspelt_key_are_errors_at_their_key_paths():
    named = dict(problems_of({"mcpServers": {}, "toolsets": {"my work": {}}}))
    misspelt = dict(problems_of({"mcpServers": {}, "toolsets": {"ok": {"expos": "lazy"}}}))
    assert "URL path segment" in named["toolsets.my work"]
    assert misspelt["toolsets.ok.expos"] == "unknown key; did you mean 'expose'?"


def test_check_prints_the_toolset_errors_and_exits_2(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {}, "toolsets": {"work": {"servers": ["git"]}}}))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "toolsets.work.servers[0]" in result.output and "no server 'git'" in result.output


@pytest.mark.slow
async def test_each_endpoint_hears_list_changed_only_for_changes_to_its_own_tools(tmp_path):
    servers = {m: demo(m, tmp_path) for m in ("calendar", "notes")}
    toolsets = {"cal": {"servers": ["calendar"]}, "jot": {"servers": ["notes"]}}
    raw = {"mcpServers": servers, "toolsets": toolsets, "memory": {"embedder": "none"}}
    heard: dict[str | None, int] = {None: 0, "cal": 0, "jot": 0}

    def counter(name: str | None) -> Any:
        async def on_message(msg: Any) -> None:
            if isinstance(msg, types.ToolListChangedNotification):
                heard[name] += 1
        return on_message

    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        ep = hub.endpoints
        async with hub.client(None, mode="legacy", message_handler=counter(None)) as whole, \
                hub.client("cal", mode="legacy", message_handler=counter("cal")) as cal, \
                hub.client("jot", mode="legacy", message_handler=counter("jot")) as jot:
            with anyio.fail_after(30):
                await hub.wait_announced()  # the start is announced before we count
                for host in (whole, cal, jot):
                    await host.send_ping()
                heard.update(dict.fromkeys(heard, 0))
                notes = {**servers["notes"], "tools": {"deny": ["search_notes"]}}
                await hub.reload(parse_config({**raw, "mcpServers": {**servers, "notes": notes}}))
                await hub.pool.wait_for(lambda: hub.pool.settled and hub.pool.connections["notes"].ready)
                await until(lambda: heard["jot"], timeout=None, every=0.02)  # the host's notice
                await hub.wait_announced()
                for host in (whole, cal, jot):
                    await host.send_ping()  # anything sent to it before now has arrived
                assert heard["cal"] == 0
                jot_heard = heard["jot"]  # notes restarted: its tools went and came back (one or two notices)
                calendar = {**servers["calendar"], "tools": {"deny": ["query"]}}
                await hub.reload(parse_config({**raw, "mcpServers": {"calendar": calendar, "notes": notes}}))
                await hub.pool.wait_for(lambda: hub.pool.settled and hub.pool.connections["calendar"].ready)
                await until(lambda: heard["cal"], timeout=None, every=0.02)  # the host's notice
                await hub.wait_announced()
                for host in (whole, cal, jot):
                    await host.send_ping()
            cal_tools = {t.name for t in (await cal.list_tools()).tools}
            whole_tools = {t.name for t in (await whole.list_tools()).tools}
    assert heard["cal"] >= 1 and heard["jot"] == jot_heard
    assert "calendar_create_event" in cal_tools and "calendar_query" not in cal_tools
    assert not [n for n in cal_tools if n.startswith("notes_")]
    assert "notes_create_note" in whole_tools and "notes_search_notes" not in whole_tools


async def test_the_token_report_counts_each_endpoint_server_and_tool_and_what_lazy_saves(tmp_path):
    servers = {m: demo(m, tmp_path) for m in ("calendar", "reminders", "notes")}
    raw = {"mcpServers": servers, "hub": {"expose": "lazy"}, "memory": {"embedder": "none"},
           "toolsets": {"cal": {"servers": ["calendar"]}}}
    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        status = await hub.report(hub.local)
    report = status["tool_tokens"]
    whole, cal = report["endpoints"]
    assert report["tokenizer"].startswith("o200k_base")
    assert (whole["endpoint"], whole["expose"], cal["endpoint"], cal["expose"]) == ("/mcp", "lazy", "/mcp/cal", "all")
    assert whole["tokens"] == whole["tokens_lazy"] and whole["lazy_saves"] == whole["tokens_all"] - whole["tokens_lazy"]
    assert cal["tokens"] == cal["tokens_all"] < whole["tokens_all"]
    assert report["servers"]["calendar"]["tools"] == 2
    assert sum(s["tokens"] for s in report["servers"].values()) == whole["tokens_all"]
    assert report["tools"]["calendar_create_event"] > 0


def test_tools_tokens_prints_the_endpoints_servers_and_tools_and_names_its_tokenizer(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {"notes": demo("notes", tmp_path)}, "hub": {"expose": "lazy"},
                                "memory": {"embedder": "none"}}))
    result = CliRunner().invoke(main, ["tools", "--tokens", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "LAZY SAVES" in result.output and "notes_create_note" in result.output
    assert "tokens counted with o200k_base" in result.output


async def test_a_lazy_endpoint_still_hears_list_changed_and_its_search_follows_the_catalog(tmp_path):
    servers = {m: demo(m, tmp_path) for m in ("calendar", "notes")}
    raw = {"mcpServers": servers, "hub": {"expose": "lazy"}, "memory": {"embedder": "none"}}
    heard: list[str] = []

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            heard.append("tools")

    async def found(host: Client) -> list[str]:
        result = await host.call_tool("hermes_tools_search", {"query": "jot down a note", "limit": 10})
        return [t["name"] for t in result.structured_content["tools"]]

    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        async with hub.client(mode="legacy", message_handler=on_message) as host:
            with anyio.fail_after(30):
                await hub.wait_announced()
                await host.send_ping()
                heard.clear()
                listed = {t.name for t in (await host.list_tools()).tools}
                before = await found(host)
                await hub.reload(parse_config({**raw, "mcpServers": {"calendar": servers["calendar"]}}))
                await until(lambda: heard, timeout=None, every=0.02)  # the host's notice
                after = await found(host)
                listed_after = {t.name for t in (await host.list_tools()).tools}
    assert "notes_create_note" in before and not [n for n in after if n.startswith("notes_")]
    assert listed == listed_after and "hermes_tools_search" in listed  # the list stays; its answers change


async def test_a_toolset_reads_gets_and_completes_only_its_own_servers_resources_and_prompts(tmp_path):
    servers = {m: demo(m, tmp_path) for m in ("calendar", "notes")}
    raw = {"mcpServers": servers, "toolsets": {"cal": {"servers": ["calendar"]}}, "memory": {"embedder": "none"}}
    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        async with hub.client(None, mode="legacy") as whole, \
                hub.client("cal", mode="legacy") as cal:
            with anyio.fail_after(30):
                await whole.call_tool("notes_create_note", {"title": "Groceries", "body": "milk"})
                read = await whole.read_resource("notes://notes/note/groceries")
                prompt = await whole.get_prompt("notes_summarize_note", {"note_id": "groceries"})
                listed = [p.name for p in (await cal.list_prompts()).prompts]
                ref = types.PromptReference(type="ref/prompt", name="notes_summarize_note")
                completed = await whole.complete(ref, {"name": "note_id", "value": "gro"})
                not_completed = await cal.complete(ref, {"name": "note_id", "value": "gro"})
                refused = []
                for attempt in (cal.read_resource("notes://notes/note/groceries"),
                                cal.get_prompt("notes_summarize_note", {"note_id": "groceries"})):
                    with pytest.raises(Exception) as err:
                        await attempt
                    refused.append(str(err.value))
    assert "milk" in read.contents[0].text and "milk" in prompt.messages[0].content.text
    assert "notes_summarize_note" not in listed
    assert refused[0].startswith("unknown resource 'notes://notes/note/groceries'")
    assert refused[1].startswith("unknown prompt 'notes_summarize_note'")
    assert completed.completion.values == ["groceries"] and not_completed.completion.values == []


async def test_an_agent_run_called_through_a_toolset_offers_the_model_only_that_toolsets_tools(tmp_path):
    servers = {m: demo(m, tmp_path) for m in ("calendar", "notes")}
    (tmp_path / "model.json").write_text(json.dumps([
        {"when": "^take a note", "tool_calls": [{"name": "notes_create_note", "arguments": {"title": "x", "body": "y"}}]},
        {"when": "Unknown tool 'notes_create_note'", "text": "That tool is not here."},
        {"when": "created|\"id\"", "text": "Noted."}]))
    raw = {"mcpServers": servers, "toolsets": {"cal": {"servers": ["calendar", "hermes"]}},
           "memory": {"embedder": "none"}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
           "agent": {"provider": "scripted", "script": str(tmp_path / "model.json")}}
    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        async with hub.client("cal") as cal, hub.client(None) as whole:
            with anyio.fail_after(60):
                scoped = (await cal.call_tool("hermes_agent_run", {"task": "take a note"})).structured_content
                trace = (await cal.call_tool("hermes_trace_get", {"run_id": scoped["run_id"]})).structured_content
                full = (await whole.call_tool("hermes_agent_run", {"task": "take a note"})).structured_content
                full_trace = (await whole.call_tool("hermes_trace_get", {"run_id": full["run_id"]})).structured_content
    budget = next(e for e in trace["events"] if e["kind"] == "budget")
    full_budget = next(e for e in full_trace["events"] if e["kind"] == "budget")
    assert scoped["answer"] == "That tool is not here." and scoped["tool_calls"][0]["is_error"]
    assert full_budget["tools_allowed"] - budget["tools_allowed"] == 2  # notes' two tools are not in 'cal'
    assert full["answer"] == "Noted." and not full["tool_calls"][0]["is_error"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_toolset_endpoint_lists_only_its_own_servers_prompts_resources_and_templates(tmp_path, mode):
    (tmp_path / "notes.json").write_text(json.dumps({"notes": [{"id": "groceries", "title": "Groceries",
                                                                "body": "milk"}]}))
    servers = {m: demo(m, tmp_path) for m in ("calendar", "notes")}
    toolsets = {"cal": {"servers": ["calendar"]}, "own": {"servers": ["calendar", "hermes"]}, "all": {}}
    raw = {"mcpServers": servers, "toolsets": toolsets,
           "memory": {"embedder": "none"}}
    listed: dict[str, tuple[list[str], list[str], list[str]]] = {}
    async with Hub(parse_config(raw)) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
        for name in (None, "cal", "own", "all"):
            async with hub.client(name, mode=mode) as host:
                with anyio.fail_after(30):
                    listed[str(name)] = ([p.name for p in (await host.list_prompts()).prompts],
                                         [r.uri for r in (await host.list_resources()).resources],
                                         [t.uri_template for t in
                                          (await host.list_resource_templates()).resource_templates])
    whole = listed["None"]
    assert "notes_summarize_note" in whole[0] and any("groceries" in uri for uri in whole[1]) and whole[2]
    own = tuple([x for x in kind if x.startswith("hub://")] for kind in whole)  # the hub's own: source 'hermes'
    assert own[1] and listed["own"] == own  # calendar has none of its own; notes' stay out of this toolset
    assert listed["cal"] == ([], [], [])  # a toolset that leaves 'hermes' out gets none of the hub's own
    assert listed["all"] == whole  # a toolset without 'servers' serves every server's


async def test_a_member_the_view_does_not_define_does_not_exist_rather_than_reaching_the_whole_catalog(tmp_path):
    from hermes_hub.protocol.upstream.surface import Surface

    raw = {"mcpServers": {}, "toolsets": {"none": {"servers": []}}, "memory": {"embedder": "none"}}
    hub = Hub(parse_config(raw))
    view = hub.endpoint("none").view
    for member in ("rebuild", "mounts", "collisions", "name_warnings", "tools", "route_uri", "argument_problems"):
        assert hasattr(hub.catalog, member)
        with pytest.raises(AttributeError):
            getattr(view, member)
    surface = [m for m in vars(Surface) if not m.startswith("_")]
    assert "generation" in surface and all(m in vars(type(view)) for m in surface)  # defined, not forwarded
