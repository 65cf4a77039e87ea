"""The hub's own surface (issue 33 item 6): by default tools/list names four own tools (remember, recall, the
agent run, session search), at most 1,500 tokens with the meta-tools when lazy; ``hub.own_tools`` lists more
or all of them, a toolset naming ``hermes`` lists all; the rest stay callable by name and findable lazily.
One token count everywhere, and docs/catalog.md's table and counts are the hub's own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hermes_hub.app.hub import Hub
from hermes_hub.core.toolsets.tokens import listing_tokens
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from tests.support import BUILTIN_TOOLS, OWN_LISTED, PROJECT

pytestmark = pytest.mark.anyio
META = {"hermes_tools_search", "hermes_tools_describe", "hermes_tools_call"}
BUDGET = 1_500  # tokens of the own surface a host pays for by default, meta-tools included when lazy
CATALOG = PROJECT / "docs" / "catalog.md"


def hub(tmp_path: Path, **hub_section: Any) -> Hub:
    return Hub(parse_config({"mcpServers": {}, "memory": {"embedder": "none"}, "hub": hub_section,
                             "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                             "toolsets": {"mine": {"servers": ["hermes"]}, "lean": {}}}))


async def listed(h: Hub, endpoint: str | None = None) -> list[Any]:
    return h.endpoint(endpoint).view.list_tools(h.local)


async def test_by_default_four_own_tools_are_listed_and_the_others_are_still_called_by_name(tmp_path):
    async with hub(tmp_path) as h, h.client() as host:
        names = {t.name for t in (await host.list_tools()).tools}
        status = await host.call_tool("hermes_hub_status", {})  # not listed, called by its name
        made = await host.call_tool("hermes_session_create", {"title": "kept"})
        lean = {t.name for t in await listed(h, "lean")}  # a toolset of every server: the same default
        mine = {t.name for t in await listed(h, "mine")}  # a toolset naming hermes chose all of it
    assert names == OWN_LISTED and lean == OWN_LISTED and mine == BUILTIN_TOOLS
    assert not status.is_error and status.structured_content["totals"]["tools_listed"] == len(OWN_LISTED)
    assert not made.is_error and made.structured_content["title"] == "kept"


@pytest.mark.parametrize(("own_tools", "expected"), [
    ("all", BUILTIN_TOOLS),
    (["core", "hermes_schedule_*"], OWN_LISTED | {n for n in BUILTIN_TOOLS if n.startswith("hermes_schedule_")}),
    (["hermes_hub_status"], {"hermes_hub_status"}),
])
async def test_hub_own_tools_lists_more_or_all_of_them(tmp_path, own_tools, expected):
    async with hub(tmp_path, own_tools=own_tools) as h:
        assert {t.name for t in await listed(h)} == expected


async def test_lazily_the_surface_is_the_four_and_the_meta_tools_within_the_budget_and_search_finds_the_rest(
        tmp_path):
    async with hub(tmp_path, expose="lazy") as h, h.client() as host:
        tools = (await host.list_tools()).tools
        found = await host.call_tool("hermes_tools_search", {"query": "create a schedule that repeats", "limit": 5})
        report = h.token_report(h.local)
        served = await listed(h)
    assert {t.name for t in tools} == OWN_LISTED | META
    assert listing_tokens(tools) <= BUDGET and listing_tokens(served) <= BUDGET  # on the wire, and as counted
    assert "hermes_schedule_create" in [t["name"] for t in found.structured_content["tools"]]
    [main] = [e for e in report["endpoints"] if e["endpoint"] == "/mcp"]
    assert main["tokens"] == main["tokens_lazy"] == listing_tokens(served)  # one count: the report's is the list's


async def test_the_status_report_and_the_page_count_tokens_the_way_tools_tokens_does(tmp_path):
    async with hub(tmp_path) as h:
        status = h.status(h.local)
        report = h.token_report(h.local)
    [main] = [e for e in report["endpoints"] if e["endpoint"] == "/mcp"]
    assert status["tool_list_tokens"] == main["tokens"] == listing_tokens(await listed(h))
    assert status["totals"] == {**status["totals"], "tools": len(BUILTIN_TOOLS), "tools_listed": len(OWN_LISTED)}


@pytest.mark.parametrize("bad", ["none", ["hermes hub status"], ["x" * 200]])
async def test_a_wrong_own_tools_value_is_a_config_error_that_says_what_to_write(bad):
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {}, "hub": {"own_tools": bad}})
    assert "hub.own_tools" in str(e.value) or "own_tools" in str(e.value)


def _doc_rows() -> dict[str, tuple[str, int]]:
    """docs/catalog.md's table of own tools: name -> (listed by default, tokens)."""
    rows = re.findall(r"^\| `(hermes_\w+)` \| (yes|no) \| ([\d,]+) \|", CATALOG.read_text(), re.M)
    return {name: (listed, int(tokens.replace(",", ""))) for name, listed, tokens in rows}


async def test_docs_catalog_lists_every_own_tool_with_what_it_costs_and_the_totals_it_states(tmp_path):
    async with hub(tmp_path, own_tools="all") as h:
        every = {t.name: listing_tokens([t]) for t in await listed(h)}
    async with hub(tmp_path / "lazy", expose="lazy") as h:
        lazy = listing_tokens(await listed(h))
    expected = {n: ("yes" if n in OWN_LISTED else "no", tokens) for n, tokens in every.items()}
    wrong = {n: expected.get(n) for n in set(expected) | set(_doc_rows()) if _doc_rows().get(n) != expected.get(n)}
    assert not wrong, f"update these rows of docs/catalog.md's table (name: listed, tokens): {wrong}"
    text = " ".join(CATALOG.read_text().split())  # as read, whatever the line breaks
    default = sum(tokens for n, tokens in every.items() if n in OWN_LISTED)
    for said in (f"all {len(every)} of the hub's own tools cost {sum(every.values()):,} tokens",
                 f"the {len(OWN_LISTED)} listed by default cost {default:,}",
                 f"lazily, with the meta-tools, {lazy:,}"):
        assert said in text, f"docs/catalog.md should say: {said}"
