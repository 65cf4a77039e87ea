"""Hosts that defer tools (issue 32 item 4): every listed tool carries an ``anthropic/searchHint`` of
everyday words (English and Chinese) its own text does not say; the hub's memory recall and remember, and
the tools a person calls daily, carry ``anthropic/alwaysLoad`` within a token budget; a server's own
alwaysLoad is dropped; a lazy endpoint lists a deferring host the tools themselves, not the meta-tools.
The hints are not counted as a model's tokens."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest

from hermes_hub.app.hub import Hub
from hermes_hub.core.toolsets.deferral import ALWAYS_LOAD, MAX_HINT_CHARS, SEARCH_HINT, defers
from hermes_hub.core.toolsets.tokens import listing_tokens
from hermes_hub.infra.call import Identity
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from hermes_hub.infra.storage.records import AuditRecord, utcnow
from tests.support import PROJECT, demo

pytestmark = pytest.mark.anyio
META = {"hermes_tools_search", "hermes_tools_describe", "hermes_tools_call"}
CLAUDE_CODE = types.Implementation(name="claude-code", version="2.1.197")
QWEN = types.Implementation(name="qwen-cli-mcp-client-hermes", version="0.24.0")


def hub(tmp_path: Path, servers: dict[str, Any] | None = None, **hub_section: Any) -> Hub:
    return Hub(parse_config({"mcpServers": servers or {}, "memory": {"embedder": "none"}, "hub": hub_section,
                             "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}}))


def hinted() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "tests.fixtures.hinted_server"], "cwd": str(PROJECT)}


def hints(tools: list[types.Tool]) -> dict[str, dict[str, Any]]:
    return {t.name: {k: v for k, v in (t.meta or {}).items() if k.startswith("anthropic/")} for t in tools}


async def test_every_listed_tool_has_a_search_hint_and_memory_is_always_loaded(tmp_path):
    async with hub(tmp_path, {"calendar": demo("calendar", tmp_path / "demo")}) as h:
        assert await h.wait_settled(30)
        async with h.client() as host:
            got = hints((await host.list_tools()).tools)
    assert {n for n, m in got.items() if m.get(ALWAYS_LOAD)} == {"hermes_memory_recall", "hermes_memory_remember"}
    assert all(isinstance(m.get(SEARCH_HINT), str) and 0 < len(m[SEARCH_HINT]) <= MAX_HINT_CHARS
               for m in got.values()), got
    query = got["calendar_query"][SEARCH_HINT].split()
    assert {"agenda", "meeting", "日程", "会议"} <= set(query)  # what people say, in English and Chinese
    assert "calendar" not in query  # ... that the tool's own name does not already say
    assert "forget" not in got["hermes_memory_recall"][SEARCH_HINT]  # not a word for a tool that only recalls


async def test_a_servers_own_always_load_is_dropped_and_its_own_hint_kept_cut(tmp_path):
    async with hub(tmp_path, {"hinted": hinted()}) as h:
        assert await h.wait_settled(30)
        async with h.client() as host:
            got = hints((await host.list_tools()).tools)
    assert ALWAYS_LOAD not in got["hinted_greedy"]  # what costs a host's context is the hub's to decide
    assert got["hinted_greedy"][SEARCH_HINT] == ("greedy hint " * 160).strip()[:MAX_HINT_CHARS]
    assert "agenda" in got["hinted_list_events"][SEARCH_HINT]
    assert not isinstance(got["hinted_quiet"].get(SEARCH_HINT, ""), dict)  # not a string: replaced or gone


async def test_a_lazy_endpoint_lists_a_deferring_host_the_tools_and_others_the_meta_tools(tmp_path):
    async with hub(tmp_path, {"calendar": demo("calendar", tmp_path / "demo")}, expose="lazy") as h:
        assert await h.wait_settled(30)
        seen: dict[tuple[str, str], set[str]] = {}
        for mode in ("legacy", "auto"):  # handshake era, and 2026-07-28 (clientInfo in each request)
            for info in (CLAUDE_CODE, QWEN, types.Implementation(name="some-ide", version="1")):
                async with h.client(mode=mode, client_info=info) as host:
                    seen[mode, info.name] = {t.name for t in (await host.list_tools()).tools}
        async with h.client(client_info=CLAUDE_CODE) as host:  # and what it was listed, it calls directly
            called = await host.call_tool("calendar_query", {"start_date": "2026-01-01", "end_date": "2026-01-02"})
    for mode in ("legacy", "auto"):
        for name in (CLAUDE_CODE.name, QWEN.name):
            assert "calendar_query" in seen[mode, name] and not META & seen[mode, name], (mode, name)
        assert META <= seen[mode, "some-ide"] and "calendar_query" not in seen[mode, "some-ide"]
    assert not called.is_error


async def test_the_tools_a_person_calls_daily_are_always_loaded_for_them_alone_within_the_budget(tmp_path):
    async with hub(tmp_path, {"calendar": demo("calendar", tmp_path / "demo")}) as h:
        assert await h.wait_settled(30)
        noon = utcnow().replace(hour=12, minute=0, second=0, microsecond=0)
        me = h.local.user_id
        for day in range(6):  # on 6 of the last 7 days, and on 2 of them a tool that is not daily
            await h.store.add_audit(AuditRecord(noon - timedelta(days=day), me, "calendar_query", "ok", 1.0))
        for day in (0, 1):
            await h.store.add_audit(AuditRecord(noon - timedelta(days=day), me, "calendar_create_event", "ok", 1.0))
        await h.habits.refresh(h.store)
        async with h.client() as host:
            mine = hints((await host.list_tools()).tools)
        async with h.client(caller=Identity("someone-else")) as host:
            theirs = hints((await host.list_tools()).tools)
        always = {n for n, m in mine.items() if m.get(ALWAYS_LOAD)}
        h.config.hub.hints.from_audit = 0  # learning from the audit turned off
        off = {t.name for t in h.endpoint(None).view.list_tools(h.local) if (t.meta or {}).get(ALWAYS_LOAD)}
        h.config.hub.hints.from_audit, h.config.hub.hints.always_load_tokens = 3, 1  # no room for any
        none = [t.name for t in h.endpoint(None).view.list_tools(h.local) if (t.meta or {}).get(ALWAYS_LOAD)]
        hint = h.endpoint(None).view.cache_hint("tools/list", h.local)
    assert always == {"hermes_memory_recall", "hermes_memory_remember", "calendar_query"}
    assert {n for n, m in theirs.items() if m.get(ALWAYS_LOAD)} == {"hermes_memory_recall", "hermes_memory_remember"}
    assert off == {"hermes_memory_recall", "hermes_memory_remember"} and none == []
    assert hint.scope == "private"  # a list with one person's daily tools is theirs


async def test_the_hints_cost_no_model_tokens_and_can_be_turned_off(tmp_path):
    async with hub(tmp_path, hints={"search": False, "always_load": ["hermes_session_*"]}) as h:
        plain = h.endpoint(None).view.list_tools(h.local)
    async with hub(tmp_path) as h:
        hinted_tools = h.endpoint(None).view.list_tools(h.local)
        h.config.hub.hints.search = False  # as a reload sets it: the kept copies of the hinted tools do not serve
        assert not any(SEARCH_HINT in (t.meta or {}) for t in h.endpoint(None).view.list_tools(h.local))
    assert not any(SEARCH_HINT in (t.meta or {}) for t in plain)
    assert [t.name for t in plain if (t.meta or {}).get(ALWAYS_LOAD)] == ["hermes_session_search"]
    assert all(SEARCH_HINT in (t.meta or {}) for t in hinted_tools)
    assert listing_tokens(hinted_tools) == listing_tokens(plain)  # no host sends a model a tool's _meta


@pytest.mark.parametrize(("hints_section", "says"), [
    ({"always_load": ["memory recall"]}, "'memory recall' is not a glob over names"),
    ({"from_audit": 99}, "from_audit"),
    ({"deferring": ["x"]}, "deferring"),
])
def test_a_bad_hints_section_is_a_clear_config_error(hints_section, says):
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {}, "hub": {"hints": hints_section}})
    assert says in str(e.value) and "hub.hints" in str(e.value)


def test_deferring_hosts_are_matched_by_their_client_name():
    patterns = ["claude-code", "qwen-cli-mcp-client*", "*copilot*"]
    assert defers("claude-code", patterns) and defers("qwen-cli-mcp-client-hermes", patterns)
    assert defers("GitHub-Copilot-CLI", patterns)
    assert not defers("claude-code-but-not", patterns) and not defers(None, patterns) and not defers("", patterns)


async def test_docs_catalog_states_the_hints_the_hub_gives(tmp_path):
    page = " ".join((PROJECT / "docs" / "catalog.md").read_text().split())
    async with hub(tmp_path, {"calendar": demo("calendar", tmp_path / "demo")}) as h:
        assert await h.wait_settled(30)
        tools = {t.name: t for t in h.endpoint(None).view.list_tools(h.local)}
    memory = listing_tokens([tools["hermes_memory_recall"], tools["hermes_memory_remember"]])
    assert f"the two memory tools cost {memory:,}." in page
    assert f"the hint is `{tools['calendar_query'].meta[SEARCH_HINT]}`" in page
