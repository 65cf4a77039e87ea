"""``mcpServers.NAME.overrides``: what hub.json says instead of a server about its tools, served to hosts, the
agent and lazy search, shown beside the server's own values, checked by ``hermes-hub check``."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub import Hub
from tests.pins.support import cli, hub_json, write
from tests.support import serve_process, until, until_listed

pytestmark = pytest.mark.anyio

OVERRIDES = {
    "delete": {"title": "Delete a file (for good)", "description_append": "There is no undo.",
               "annotations": {"destructiveHint": True, "readOnlyHint": False}},
    "fetch": {"description": "Fetch one public web page by its URL."},
}


@pytest.mark.slow
async def test_a_served_hub_lists_the_overrides_and_tools_show_puts_the_servers_values_beside_them(tmp_path):
    config = hub_json(tmp_path, overrides=OVERRIDES)
    async with serve_process(config, tmp_path) as served, \
            Client(streamable_http_client(served.url), cache=None) as host:
        await until_listed(host, "drifty_delete")
        listed = {t.name: t for t in (await host.list_tools()).tools}
        code, shown = await cli("tools", "--show", "drifty_delete", "--config", str(served.config))
        json_code, as_json = await cli("tools", "--show", "drifty_fetch", "--json", "--config", str(served.config))
    delete, fetch = listed["drifty_delete"], listed["drifty_fetch"]
    assert delete.title == "Delete a file (for good)" and delete.description == "Delete a file.\nThere is no undo."
    assert delete.annotations.destructive_hint is True and delete.annotations.read_only_hint is False
    assert fetch.description == "Fetch one public web page by its URL." and fetch.annotations is None
    assert listed["drifty_echo"].description == "Return text unchanged."  # no override: the server's
    assert code == 0, shown
    lines = shown.splitlines()
    assert lines[0] == "drifty_delete  (server 'drifty', its tool 'delete')"
    assert lines[1:6] == [
        "title: Delete a file (for good)",
        "  overridden in hub.json; the server's: -",
        "description: Delete a file.",
        "There is no undo.",
        "  overridden in hub.json; the server's: Delete a file.",
    ]
    assert 'annotations: {"readOnlyHint": false, "destructiveHint": true}' in lines
    shown_json, end = json.JSONDecoder().raw_decode(as_json)  # stdout; then stderr names the serving hub
    assert as_json[end:].strip().startswith("talking to the hub serving"), as_json[end:]
    assert json_code == 0 and shown_json["overridden"] == {
        "description": {"server": "Fetch a web page.", "served": "Fetch one public web page by its URL."}}


async def test_the_agent_and_lazy_search_see_overrides_and_a_pin_covers_what_the_server_sent(tmp_path):
    config = hub_json(tmp_path, overrides=OVERRIDES)
    config["hub"]["expose"] = "lazy"
    cfg = write(tmp_path / "hub.json", config)
    async with Hub.from_file(cfg) as hub, hub.client(cache=None) as host:
        await until(lambda: "drifty_delete" in hub.catalog.tools)
        described = await host.call_tool("hermes_tools_describe", {"names": ["drifty_delete"]})
        found = await host.call_tool("hermes_tools_search", {"query": "undo"})
        item = hub.catalog.tools["drifty_delete"].item  # what retries and the agent's confirmations read
        await until(lambda: _stored(hub, 4))  # hub.pin auto: written on first sight
        pinned = {p.tool: p for p in await hub.store.list_pins("drifty")}
        # another override in hub.json is no change of the server's: nothing is withheld after the reload
        config["mcpServers"]["drifty"]["overrides"]["delete"]["description"] = "Remove a file."
        del config["mcpServers"]["drifty"]["overrides"]["delete"]["description_append"]
        await hub.reload_file() if write(cfg, config) else None
        await until(lambda: hub.catalog.tools.get("drifty_delete") and
                    hub.catalog.tools["drifty_delete"].item.description == "Remove a file.")
    tool = described.structured_content["tools"][0]
    assert tool["description"] == "Delete a file.\nThere is no undo." and tool["annotations"]["destructiveHint"] is True
    assert "drifty_delete" in json.dumps(found.structured_content)
    assert item.annotations.destructive_hint is True
    assert pinned["delete"].definition["description"] == "Delete a file." and "annotations" not in pinned["delete"].definition
    assert hub.catalog.withheld == {}


async def _stored(hub: Hub, n: int) -> bool:
    return len(await hub.store.list_pins("drifty")) == n


@pytest.mark.slow
async def test_check_warns_of_an_override_for_a_tool_the_server_lacks(tmp_path):
    cfg = write(tmp_path / "hub.json", hub_json(tmp_path, overrides={"delet": {"title": "Delete"}}))
    code, out = await cli("check", str(cfg))
    assert code == 0, out
    assert ("warning: mcpServers.drifty.overrides.delet: the server has no tool 'delet', so this override does "
            "nothing; did you mean 'delete'?") in out


@pytest.mark.parametrize("override, message", [
    ({"delete": {"descripton": "x"}}, "mcpServers.drifty.overrides.delete.descripton: unknown key; did you mean "
                                      "'description'?"),
    ({"delete": {"annotations": {"destructive": True}}},
     "mcpServers.drifty.overrides.delete.annotations.destructive: unknown key; did you mean 'destructiveHint'?"),
    ({"delete": {"description": "a", "description_append": "b"}},
     "mcpServers.drifty.overrides.delete: give 'description' (replaces the server's) or 'description_append' "
     "(adds to it), not both"),
])
async def test_a_bad_override_is_a_config_error_that_names_its_key(tmp_path, override, message):
    cfg = write(tmp_path / "hub.json", hub_json(tmp_path, overrides=override))
    code, out = await cli("check", str(cfg))
    assert code == 2 and message in out, out
