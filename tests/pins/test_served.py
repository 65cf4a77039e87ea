"""Pins in a served hub (``hermes-hub serve`` as a process): drift found on a restart and on a config reload,
shown by ``hermes-hub tools --drift`` and the status page, approved from the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.core.aggregation.pins import pinned
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import PinRecord
from tests.fixtures.drifting_server import BASE
from tests.pins.support import change, cli, hub_json, text, write
from tests.support import serve_process, tool_names, until, until_listed

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WIDER = {"type": "object", "properties": {"url": {"type": "string"}, "forward_to": {"type": "string"}},
         "required": ["url"]}


async def pins(tmp_path) -> list:
    async with open_store(f"sqlite:///{tmp_path / 'hub.db'}") as store:
        return await store.list_pins("drifty")


async def test_a_definition_changed_across_a_restart_is_withheld_shown_with_a_diff_and_logged_once(tmp_path):
    config = hub_json(tmp_path)
    async with serve_process(config, tmp_path) as served, \
            Client(streamable_http_client(served.url), cache=None) as host:
        await until_listed(host, "drifty_fetch")
        await until(lambda: _count(tmp_path, 4), timeout=15)  # hub.pin auto: pinned on first sight

    change(tmp_path, fetch={"inputSchema": WIDER})
    async with serve_process(config, tmp_path) as served:
        async with Client(streamable_http_client(served.url), cache=None) as host:
            await until_listed(host, "drifty_echo")
            names = await tool_names(host)
            refused = await host.call_tool("drifty_fetch", {"url": "https://example.org"})
        code, out = await cli("tools", "--drift", "--url", served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            page = (await http.get(served.url.removesuffix("/mcp") + "/status")).text
        log = served.log.read_text()

    assert "drifty_fetch" not in names and {"drifty_echo", "drifty_delete"} <= names
    assert refused.is_error and "(inputSchema changed)" in text(refused)
    assert code == 3, out
    assert "drifty_fetch (server 'drifty', tool 'fetch'): withheld, inputSchema changed since it was pinned" in out
    assert '+      "forward_to": {' in out and "accept it: hermes-hub tools approve drifty_fetch" in out
    assert "Withheld: tool 'drifty_fetch' of 'drifty'" in page and "forward_to" in page
    assert log.count("tool 'drifty_fetch' is withheld") == 1


async def _count(tmp_path, n: int) -> bool:
    return len(await pins(tmp_path)) == n


async def test_a_reload_that_changes_a_definition_withholds_it_and_approving_the_server_restores_it(tmp_path):
    config = hub_json(tmp_path)
    async with serve_process(config, tmp_path) as served, \
            Client(streamable_http_client(served.url), cache=None) as host:
        await until_listed(host, "drifty_fetch")
        await until(lambda: _count(tmp_path, 4), timeout=15)
        config["mcpServers"]["drifty"]["env"]["DRIFT_DESCRIPTION"] = "Fetch a page and mail it to someone."
        served.config.write_text(json.dumps(config))  # the hub sees the file change: drifty restarts
        with anyio.fail_after(30):
            await until(lambda: "withheld" in served.log.read_text(), timeout=None)
        names = await tool_names(host)
        _, drift = await cli("tools", "--drift", "--json", "--url", served.url)
        (shown,) = json.loads(drift)
        code, out = await cli("tools", "approve", "drifty", "--digest", shown["digest"], "--config", str(served.config))
        with anyio.fail_after(15):
            await until_listed(host, "drifty_fetch", timeout=None)
        listed = {t.name: t for t in (await host.list_tools()).tools}
    assert "drifty_fetch" not in names and "drifty_echo" in names
    assert code == 0 and "approved 'drifty_fetch' (description changed)" in out, out
    assert listed["drifty_fetch"].description == "Fetch a page and mail it to someone."


async def test_tools_pin_pins_what_the_servers_send_and_reports_what_changed_since(tmp_path):
    cfg = write(tmp_path / "hub.json", hub_json(tmp_path, pin="manual"))
    code, out = await cli("tools", "pin", "--config", str(cfg))
    assert code == 0 and "pinned 4 tool definition(s); 0 were pinned already" in out, out
    change(tmp_path, delete={"annotations": {"readOnlyHint": True}})  # a delete that claims to only read
    again_code, again = await cli("tools", "pin", "drifty", "--config", str(cfg))
    assert again_code == 0 and "pinned 0 tool definition(s); 3 were pinned already" in again
    assert "warning: 'drifty_delete' changed since it was pinned: see `hermes-hub tools --drift`" in again


async def test_tools_drift_from_the_config_shows_the_diff_and_records_it_for_approve(tmp_path):
    cfg = write(tmp_path / "hub.json", hub_json(tmp_path, pin="manual"))
    async with open_store(f"sqlite:///{tmp_path / 'hub.db'}") as store:  # pinned as `tools pin` would
        await store.add_pins([PinRecord("drifty", name, digest, kept, AT, "alice") for name, (kept, digest) in
                              ((n, pinned(types.Tool(name=n, **spec))) for n, spec in BASE.items())])
    change(tmp_path, delete={"annotations": {"readOnlyHint": True}})
    code, drift = await cli("tools", "--drift", "--config", str(cfg))  # the hub in-process, from the config
    listed_code, listed = await cli("tools", "--config", str(cfg))
    assert code == 3 and "drifty_delete (server 'drifty', tool 'delete'): withheld, annotations changed" in drift
    assert '+  "annotations": {' in drift and '+    "readOnlyHint": true' in drift
    assert "pinned 2026-12-01T12:00:00 by alice" in drift
    rows = [line.split()[0] for line in listed.splitlines() if line.startswith("drifty_")]
    assert listed_code == 0 and "drifty_echo" in rows and "drifty_delete" not in rows
    assert "WARNING hermes_hub.pins: tool 'drifty_delete' is withheld" in listed  # the log says why
    assert [p.tool for p in await pins(tmp_path) if p.seen_digest] == ["delete"]  # --drift recorded what it saw
