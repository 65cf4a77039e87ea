"""A lean list, through a served hub with real SDK clients in both eras: the hub's own tools are one more
source, ``hermes``, that a toolset chooses like any server's; lazy mode lists the meta-tools and what
``hub.always`` names, the rest staying findable and callable; merged tools keep their old names working."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from tests.support import BUILTIN_TOOLS, OWN_LISTED, demo, serve_process

pytestmark = pytest.mark.anyio
META = ["hermes_tools_search", "hermes_tools_describe", "hermes_tools_call"]
CALENDAR = ["calendar_query", "calendar_create_event"]


def config(tmp_path: Any, **hub: Any) -> dict[str, Any]:
    return {
        "mcpServers": {"calendar": demo("calendar", tmp_path)},
        "hub": {"expose": "lazy", "always": ["hermes_memory_recall"], **hub},
        "toolsets": {
            "cal": {"servers": ["calendar"]},  # leaves 'hermes' out: of the hub's own, only what hub.always names
            "both": {"servers": ["hermes", "calendar"]},
            "picked": {"servers": ["hermes", "calendar"], "tools": {"allow": ["calendar_*", "hermes_session_*"]}},
            "cal_lazy": {"servers": ["calendar"], "expose": "lazy"},
        },
        "memory": {"embedder": "none"}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
    }


def text(result: Any) -> Any:
    return json.loads(result.content[0].text)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.slow
async def test_lazy_mode_lists_the_meta_tools_and_hub_always_and_the_rest_stays_findable_and_callable(tmp_path, mode):
    async with serve_process(config(tmp_path), tmp_path) as served, Client(served.url, mode=mode) as host:
        with anyio.fail_after(30):
            listed = [t.name for t in (await host.list_tools()).tools]
            found = text(await host.call_tool("hermes_tools_search", {"query": "the hub's status", "limit": 10}))
            through = await host.call_tool("hermes_tools_call", {"name": "hermes_hub_status"})
            direct = await host.call_tool("hermes_hub_status", {})
    assert set(listed[:-3]) == OWN_LISTED and listed[-3:] == META  # hub.own_tools' four, then the meta-tools
    assert "hermes_memory_recall" in listed  # hub.always names it too: listed once
    assert "hermes_hub_status" in [t["name"] for t in found["tools"]]
    assert not through.is_error and not direct.is_error
    assert [s["name"] for s in text(through)["servers"]] == [s["name"] for s in text(direct)["servers"]]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.slow
async def test_a_toolset_gets_the_hubs_own_tools_only_by_naming_hermes_or_a_glob_or_hub_always(tmp_path, mode):
    names: dict[str, list[str]] = {}
    async with serve_process(config(tmp_path), tmp_path) as served:
        for ts in ("cal", "both", "picked", "cal_lazy"):
            async with Client(f"{served.url}/{ts}", mode=mode) as host:
                with anyio.fail_after(30):
                    names[ts] = [t.name for t in (await host.list_tools()).tools]
                    if ts == "cal":
                        with pytest.raises(MCPError, match="unknown tool 'hermes_hub_status'"):
                            await host.call_tool("hermes_hub_status", {})
                        resources = (await host.list_resources()).resources
                    if ts == "cal_lazy":
                        found = text(await host.call_tool("hermes_tools_search", {"query": "hub status", "limit": 50}))
    own = [n for n in names["both"] if n.startswith("hermes_")]
    assert names["cal"] == ["hermes_memory_recall", *CALENDAR] and resources == []  # no hub:// resources either
    assert set(own) == BUILTIN_TOOLS and set(names["both"]) == {*own, *CALENDAR}
    assert set(names["picked"]) == {*CALENDAR, *(n for n in own if n.startswith("hermes_session_"))}
    assert names["cal_lazy"] == ["hermes_memory_recall", *META]
    assert {t["name"] for t in found["tools"]} <= {*CALENDAR, "hermes_memory_recall"}  # search stays in scope


async def test_merged_tools_keep_their_old_names_working_with_a_deprecation_note(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served, Client(f"{served.url}/both") as host:
        with anyio.fail_after(30):
            tools = {t.name: t for t in (await host.list_tools()).tools}
            for _ in range(2):
                await host.call_tool("hermes_session_create", {"title": "x"})
            old = text(await host.call_tool("hermes_session_delete_all", {"confirm": True}))
            await host.call_tool("hermes_session_create", {"title": "y"})
            new = text(await host.call_tool("hermes_session_delete", {"all": True}))
            neither = await host.call_tool("hermes_session_delete", {})
            await host.call_tool("hermes_memory_remember", {"text": "I live in Lyon"})
            forgot_old = text(await host.call_tool("hermes_memory_forget_all", {"confirm": True}))
            await host.call_tool("hermes_memory_remember", {"text": "I live in Nantes"})
            forgot_new = text(await host.call_tool("hermes_memory_forget", {"all": True}))
            left = text(await host.call_tool("hermes_memory_list", {}))
    for old_name, new_name in (("hermes_session_delete_all", "hermes_session_delete"),
                               ("hermes_memory_forget_all", "hermes_memory_forget")):
        assert "Deprecated" in tools[old_name].description and new_name in tools[old_name].description
        assert "all: true" in tools[new_name].description
    assert (old, new) == ({"deleted": 2}, {"deleted": 1})
    assert neither.is_error and "all: true" in neither.content[0].text
    assert forgot_old == forgot_new and left["memories"] == []


@pytest.mark.slow
async def test_an_agent_run_named_by_hub_always_in_a_toolset_without_hermes_still_uses_its_tools(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps([
        {"when": "^what is on", "tool_calls": [{"name": "calendar_query",
                                                 "arguments": {"start_date": "2026-01-01", "end_date": "2026-01-02"}}]},
        {"when": "events", "text": "Nothing planned."}]))
    raw = config(tmp_path, always=["hermes_agent_run"])
    raw["agent"] = {"provider": "scripted", "script": str(tmp_path / "model.json")}
    async with serve_process(raw, tmp_path) as served, Client(f"{served.url}/cal") as host:
        with anyio.fail_after(60):
            listed = [t.name for t in (await host.list_tools()).tools]
            run = (await host.call_tool("hermes_agent_run", {"task": "what is on my calendar?"})).structured_content
    assert listed == ["hermes_agent_run", *CALENDAR]
    assert run["answer"] == "Nothing planned." and not run["tool_calls"][0]["is_error"]
