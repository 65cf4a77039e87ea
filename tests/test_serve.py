"""`hermes-hub serve` as a real process: over stdio to an SDK client, over HTTP on a free port."""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters

from tests.support import (
    PROJECT,
    demo,
    free_port,
    hub_env,
    process,
    served_hub,
    stdio_hub,
    toy,
    wait_http,
    wait_port,
    until_listed,
)

pytestmark = pytest.mark.anyio
ERAS = ["auto", "legacy"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.slow
async def test_the_hub_serves_its_catalog_over_stdio_to_a_host_process(tmp_path, mode):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": demo("notes", tmp_path)}}))
    hub = StdioServerParameters(command=sys.executable, args=["-m", "hermes_hub", "serve", "--stdio", "--config",
                                                              str(cfg)], cwd=str(PROJECT), env=hub_env())
    with anyio.fail_after(30):
        async with Client(hub, mode=mode) as host:
            # The hub answers at once and adds servers as they become ready: wait for notes.
            await until_listed(host, "notes_create_note", timeout=None)  # bounded above
            made = await host.call_tool("notes_create_note", {"title": "Via stdio", "body": "hello"})
            protocol = host.protocol_version
    assert made.structured_content["id"] == "via-stdio"
    assert protocol == ("2025-11-25" if mode == "legacy" else "2026-07-28")


@pytest.mark.slow
async def test_readyz_is_503_until_every_server_has_settled_then_lists_their_states(tmp_path):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {"slow": toy("--start-delay", "2"),
                                              "ghost": {"command": "no-such-binary-here"}}}))
    port = free_port()
    log = tmp_path / "hub.log"
    argv = [sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--port", str(port)]
    with process(argv, log) as p:
        with anyio.fail_after(30):
            alive = await wait_http(f"http://127.0.0.1:{port}/healthz", p, log)
            async with httpx2.AsyncClient() as http:
                early = await http.get(f"http://127.0.0.1:{port}/readyz")
            ready = await wait_http(f"http://127.0.0.1:{port}/readyz", p, log)
    assert alive.json() == {"ok": True}
    assert early.status_code == 503 and early.json()["ready"] is False
    states = {s["name"]: s["state"] for s in ready.json()["servers"]}
    assert states == {"slow": "READY", "ghost": "FAILED"}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.slow
async def test_the_hub_serves_over_http_with_a_downstream_that_is_itself_served_over_http(tmp_path, mode):
    port = free_port()
    log = tmp_path / "notes.log"
    argv = [sys.executable, "-m", "servers.notes", "--http", str(port)]
    with process(argv, log, env={"HERMES_DEMO_DATA": str(tmp_path)}) as notes:
        with anyio.fail_after(20):
            await wait_port(port, notes, log)
        remote = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
        async with served_hub({"mcpServers": {"remote": remote, "local": toy()}}, tmp_path) as url:
            with anyio.fail_after(30):
                async with Client(url, mode=mode) as host:
                    names = {t.name for t in (await host.list_tools()).tools}
                    made = await host.call_tool("remote_create_note", {"title": "Over HTTP", "body": "twice"})
                    echoed = await host.call_tool("local_echo", {"text": "ok"})
                    read = await host.read_resource("notes://remote/note/over-http")
    assert {"remote_create_note", "remote_search_notes", "local_echo", "hermes_memory_recall"} <= names
    assert made.structured_content["id"] == "over-http"
    assert echoed.content[0].text == "ok"
    assert "twice" in read.contents[0].text


async def test_serve_refuses_a_non_loopback_address_and_says_why(tmp_path):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}}))
    log = tmp_path / "hub.log"
    with process([sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--host", "0.0.0.0"], log) as p:
        code = p.wait(timeout=20)
    assert code == 2
    assert "refusing to listen on 0.0.0.0" in log.read_text()


@pytest.mark.slow
async def test_a_hub_is_a_valid_downstream_of_another_hub_and_names_accumulate_prefixes(tmp_path):
    # the inner hub lists all of its own tools, so its status is reachable through the outer one
    inner = stdio_hub({"mcpServers": {"notes": demo("notes", tmp_path)}, "hub": {"own_tools": "all"}},
                      tmp_path / "inner.json")
    async with served_hub({"mcpServers": {"home": inner}}, tmp_path) as url:
        with anyio.fail_after(30):
            async with Client(url) as host:
                # The inner hub itself becomes READY before its own servers: wait for them to arrive.
                await until_listed(host, "home_notes_create_note", timeout=None)  # bounded above
                made = await host.call_tool("home_notes_create_note", {"title": "Chained", "body": "two hops"})
                inner_status = await host.call_tool("home_hermes_hub_status", {})
                read = await host.read_resource("notes://home/notes/note/chained")
    assert made.structured_content["id"] == "chained"
    assert inner_status.structured_content["servers"][0]["state"] == "READY"
    assert "two hops" in read.contents[0].text
