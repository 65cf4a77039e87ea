"""MCP Apps pass through intact: every URI the weather app hands out is one the hub can read back.

The server is tests/fixtures/weather_app.py (a real stdio child), behind an in-process hub as
server ``weather``; hosts are real SDK clients of ``hub.server`` in both protocol eras.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from hermes_hub import Hub
from hermes_hub.core.aggregation import apps
from hermes_hub.core.aggregation.namespace import Namespace
from hermes_hub.infra.config import parse_config
from tests.fixtures.weather_app import HTML, UI_META, VIEW
from tests.support import PROJECT, stdio_hub

pytestmark = pytest.mark.anyio
ERAS = ["legacy", "auto"]  # the handshake (2025-11-25) and 2026-07-28
PUBLIC_VIEW = "ui://weather/weather/view.html"
RENDERS_APPS = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]
WEATHER = {"command": sys.executable, "args": ["-m", "tests.fixtures.weather_app"], "cwd": str(PROJECT)}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@asynccontextmanager
async def weather_hub(**hub: Any) -> AsyncIterator[Hub]:
    async with Hub(parse_config({"mcpServers": {"weather": WEATHER}, **hub})) as running:
        with anyio.fail_after(30):
            assert await running.wait_settled(30)
        yield running


def direct() -> Client:
    return Client(StdioServerParameters(command=WEATHER["command"], args=WEATHER["args"], cwd=WEATHER["cwd"]),
                  mode="legacy")


def dumped(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.mark.parametrize("era", ERAS)
async def test_the_tool_names_its_ui_by_a_uri_the_hub_lists_and_reads_as_the_server_does(era):
    async with weather_hub() as hub, hub.client(mode=era, extensions=RENDERS_APPS) as host, direct() as own:
        with anyio.fail_after(30):
            tools = {t.name: t for t in (await host.list_tools()).tools}
            listed = {r.uri: r for r in (await host.list_resources()).resources}
            through = await host.read_resource(tools["weather_forecast"].meta["ui"]["resourceUri"])
            straight = await own.read_resource(VIEW)
    meta = tools["weather_forecast"].meta
    assert meta["ui"]["resourceUri"] == meta["ui/resourceUri"] == PUBLIC_VIEW
    assert tools["weather_refresh"].meta["ui"] == {"resourceUri": PUBLIC_VIEW, "visibility": ["app"]}
    assert listed[PUBLIC_VIEW].mime_type == APP_MIME_TYPE and listed[PUBLIC_VIEW].meta["ui"] == UI_META
    [got], [want] = through.contents, straight.contents
    assert (got.uri, got.mime_type, got.text, got.meta) == (PUBLIC_VIEW, APP_MIME_TYPE, HTML, {"ui": UI_META})
    assert dumped(got) == {**dumped(want), "uri": PUBLIC_VIEW}  # CSP, permissions, domain: unchanged


@pytest.mark.parametrize("era", ERAS)
async def test_links_and_embedded_resources_in_results_and_prompts_are_readable_through_the_hub(era):
    async with weather_hub() as hub, hub.client(mode=era) as host:
        with anyio.fail_after(30):
            result = await host.call_tool("weather_forecast", {"city": "Paris"})
            prompt = await host.get_prompt("weather_briefing")
            links = [b.uri for b in result.content if isinstance(b, types.ResourceLink)]
            embedded = [b.resource.uri for b in result.content if isinstance(b, types.EmbeddedResource)]
            in_prompt = [m.content.uri if isinstance(m.content, types.ResourceLink) else m.content.resource.uri
                         for m in prompt.messages]
            read = {uri: (await host.read_resource(uri)).contents[0] for uri in {*links, *embedded, *in_prompt}}
    assert links == [PUBLIC_VIEW, "weather://weather/city/Paris"]
    assert embedded == ["weather://weather/city/Paris"]
    assert in_prompt == [PUBLIC_VIEW, "weather://weather/city/Paris"]
    assert read[PUBLIC_VIEW].text == HTML and read["weather://weather/city/Paris"].text == "Paris: sunny"
    assert {c.uri for c in read.values()} == set(read)  # each read names the URI it was asked for


async def test_templates_keep_the_mapping_and_a_read_of_an_expanded_one_reaches_the_server():
    async with weather_hub() as hub, hub.client() as host:
        with anyio.fail_after(30):
            templates = [t.uri_template for t in (await host.list_resource_templates()).resource_templates]
            read = await host.read_resource("weather://weather/city/Oslo")
    assert "weather://weather/city/{name}" in templates
    assert read.contents[0].text == "Oslo: sunny"


@pytest.mark.parametrize("era", ERAS)
async def test_app_only_tools_reach_hosts_that_render_apps_and_stay_callable_but_no_model_is_offered_them(era):
    async with weather_hub() as hub, hub.client(mode=era, extensions=RENDERS_APPS) as app_host, \
            hub.client(mode=era) as plain_host:
        with anyio.fail_after(30):
            for_apps = {t.name for t in (await app_host.list_tools()).tools}
            for_plain = {t.name for t in (await plain_host.list_tools()).tools}
            by_public = await app_host.call_tool("weather_refresh", {})
            by_own_name = await app_host.call_tool("refresh", {})  # what the app's own code calls
    assert {"weather_forecast", "weather_refresh"} <= for_apps
    assert "weather_forecast" in for_plain and "weather_refresh" not in for_plain
    assert by_public.content[0].text == by_own_name.content[0].text == "refreshed: 22 C"
    assert "weather_refresh" not in {t.name for t in hub.catalog.list_tools(hub.local) if apps.for_model(t)}


async def test_lazy_search_describe_and_call_never_offer_an_app_only_tool_to_a_model():
    async with weather_hub(hub={"expose": "lazy"}) as hub, hub.client() as host:
        with anyio.fail_after(30):
            found = await host.call_tool("hermes_tools_search", {"query": "fresh numbers for the open view",
                                                                  "limit": 50})
            described = await host.call_tool("hermes_tools_describe", {"names": ["weather_refresh"]})
            called = await host.call_tool("hermes_tools_call", {"name": "weather_refresh"})
            by_app = await host.call_tool("weather_refresh", {})  # the app's own way in stays open
    names = [t["name"] for t in found.structured_content["tools"]]
    assert "weather_refresh" not in names and names  # the search found the other tools
    assert described.structured_content["unknown"] == ["weather_refresh"]
    assert called.is_error and "for its app's view only" in called.content[0].text
    assert by_app.content[0].text == "refreshed: 22 C"


@pytest.mark.parametrize("era", ERAS)
async def test_the_hub_advertises_the_apps_extension_to_hosts_and_to_its_servers(era):
    async with weather_hub() as hub, hub.client(mode=era) as host:
        with anyio.fail_after(30):
            said = await host.call_tool("weather_supports", {})
            caps = host.server_capabilities
    # ServerCapabilities.extensions is 2026-07-28 vocabulary: the SDK sieves it off handshake-era answers
    # (hosts of that era find apps by the tools' _meta.ui, as the extension says).
    assert (EXTENSION_ID in (caps.extensions or {})) is (era == "auto")
    assert said.content[0].text == "apps: True"  # the server saw the hub as a host that renders apps


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # subscribe: handshake era
async def test_a_resource_updated_notification_names_the_uri_the_host_subscribed_to():
    updates: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            got.set()

    async with weather_hub() as hub, hub.client(mode="legacy", message_handler=on_message) as host:
        with anyio.fail_after(30):
            await host.session.subscribe_resource(PUBLIC_VIEW)
            told = await host.call_tool("weather_touch", {})
            await got.wait()
    assert told.content[0].text == "told 1" and updates == [PUBLIC_VIEW]


def test_prompt_and_result_meta_name_the_ui_under_the_hub_and_an_empty_prefix_changes_nothing():
    prompt = types.Prompt(name="p", meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}, "other": VIEW})
    mapped = apps.with_meta(prompt, Namespace("weather"))
    assert mapped.meta == {"ui": {"resourceUri": PUBLIC_VIEW, "visibility": ["app"]}, "other": VIEW}
    assert apps.with_meta(prompt, Namespace("")) is prompt
    result = types.CallToolResult(content=[types.ResourceLink(type="resource_link", uri=VIEW, name="v")])
    assert apps.tool_result(result, Namespace("")) is result
    assert apps.tool_result(result, Namespace("a")).content[0].uri == "ui://a/weather/view.html"


def test_the_mapping_composes_behind_another_hub_and_reverses_step_by_step():
    inner, outer = Namespace("weather"), Namespace("edge")
    public = outer.uri(inner.uri(VIEW))
    assert public == "ui://edge/weather/weather/view.html"
    assert inner.original_uri(outer.original_uri(public)) == VIEW


async def test_an_agent_run_is_not_offered_an_app_only_tool(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps([
        {"when": "Unknown tool 'weather_refresh'", "text": "I was not given that tool."},
        {"when": "refresh the view", "tool_calls": [{"name": "weather_refresh", "arguments": {}}]},
    ]))
    agent = {"provider": "scripted", "script": str(tmp_path / "model.json")}
    async with weather_hub(agent=agent, memory={"embedder": "none"}) as hub, hub.client() as host:
        with anyio.fail_after(60):
            run = (await host.call_tool("hermes_agent_run", {"task": "refresh the view"})).structured_content
    # The loop answers a call of a tool it did not offer with "Unknown tool": refresh was not offered.
    assert run["answer"] == "I was not given that tool."
    assert run["tool_calls"][0]["name"] == "weather_refresh" and run["tool_calls"][0]["is_error"]


@pytest.mark.slow
async def test_behind_another_hub_the_ui_the_links_and_the_apps_own_names_still_work(tmp_path):
    inner = stdio_hub({"mcpServers": {"weather": WEATHER}}, tmp_path / "inner.json", mode="legacy")
    async with Hub(parse_config({"mcpServers": {"inner": inner}})) as hub:
        with anyio.fail_after(60):
            assert await hub.wait_settled(60)
            async with hub.client(extensions=RENDERS_APPS) as host:
                tools = {t.name: t for t in (await host.list_tools()).tools}
                ui = tools["inner_weather_forecast"].meta["ui"]["resourceUri"]
                read = await host.read_resource(ui)
                result = await host.call_tool("inner_weather_forecast", {"city": "Rome"})
                links = [b.uri for b in result.content if isinstance(b, types.ResourceLink)]
                linked = [(await host.read_resource(uri)).contents[0] for uri in links]
                by_own_name = await host.call_tool("refresh", {})
    assert ui == "ui://inner/weather/weather/view.html" and read.contents[0].text == HTML
    assert read.contents[0].meta == {"ui": UI_META}
    assert tools["inner_weather_refresh"].meta["ui"]["visibility"] == ["app"]
    assert links == [ui, "weather://inner/weather/city/Rome"]
    assert [c.text for c in linked] == [HTML, "Rome: sunny"]
    assert by_own_name.content[0].text == "refreshed: 22 C"


async def test_an_apps_own_name_reaches_no_tool_outside_the_toolset_of_the_endpoint_called():
    async with weather_hub(toolsets={"bare": {"servers": []}, "wx": {"servers": ["weather"]}}) as hub, \
            hub.client("bare", extensions=RENDERS_APPS) as bare, \
            hub.client("wx", extensions=RENDERS_APPS) as wx:
        with anyio.fail_after(30):
            inside = await wx.call_tool("refresh", {})
            with pytest.raises(MCPError) as outside:
                await bare.call_tool("refresh", {})
    assert inside.content[0].text == "refreshed: 22 C"
    assert "refresh" in outside.value.message and "tools/list" in outside.value.message
