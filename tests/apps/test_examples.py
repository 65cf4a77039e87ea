"""The MCP Apps example servers published with the extension on npm work through the hub as directly.

Each of server-basic-vanillajs, server-system-monitor and server-map (interop/package.json) runs
behind a real ``hermes-hub serve`` over stdio and over HTTP, and the host is the extension's own
host side run headless (interop/apps-host.mjs: ``AppBridge`` and ``App`` joined in memory, over the
TypeScript SDK's client) in both protocol eras. For every tool: its ``_meta.ui`` names a URI the hub
serves, reading it returns the server's HTML with the same mime type and ``_meta``; the view's own
calls (by the server's tool names, as the app's code makes them) and reads work as directly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_hub.core.aggregation.namespace import Namespace
from tests.interop.conftest import LOOPBACK_ONLY, MODULES, INTEROP, node, require, run
from tests.support import PROJECT, free_port, hub_env, process, serve_process, wait_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
HOST = INTEROP / "apps-host.mjs"
APP_MIME = "text/html;profile=mcp-app"
EXAMPLES: dict[str, tuple[str, list[dict[str, Any]]]] = {  # hub name -> (npm package, calls its view makes)
    "basic": ("server-basic-vanillajs", [{"name": "get-time"}]),
    "monitor": ("server-system-monitor", [{"name": "poll-system-stats"}, {"name": "get-system-info"}]),
    "map": ("server-map", [{"name": "show-map", "arguments": {"west": 2.2, "south": 48.8, "east": 2.5,
                                                              "north": 48.9}}]),
}
ERAS = ["legacy", "2026-07-28"]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def entry(package: str) -> Path:
    path = MODULES / "@modelcontextprotocol" / package / "dist" / "index.js"
    require(path, HOST)
    return path


async def host(target: dict[str, Any], era: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """One run of the headless apps host against ``target`` (a URL or a command)."""
    done = await run([node(), str(HOST), json.dumps(target), json.dumps({"mode": era, "calls": calls})], timeout=90)
    return done.json


@pytest.fixture(scope="module")
async def direct() -> dict[str, dict[str, Any]]:
    """What each example serves when reached directly (stdio; these servers speak the handshake era)."""
    return {name: await host({"command": node(), "args": [str(entry(package)), "--stdio"]}, "legacy", calls)
            for name, (package, calls) in EXAMPLES.items()}


def stdio_entry(package: str) -> dict[str, Any]:
    return {"command": node(), "args": [str(entry(package)), "--stdio"]}


def check_same(hub: dict[str, Any], direct: dict[str, dict[str, Any]]) -> None:
    tools = {t["name"]: t["ui"] for t in hub["tools"]}
    for name, own in direct.items():
        ns = Namespace(name)
        for tool in own["tools"]:
            ui = tool["ui"]
            public = tools[ns.name(tool["name"])]  # listed, app-only tools too: this host renders apps
            if ui is None:
                assert public is None
                continue
            assert public == {**ui, **({"resourceUri": ns.uri(ui["resourceUri"])} if "resourceUri" in ui else {})}
        for uri, contents in own["uis"].items():
            [want], [got] = contents, hub["uis"][ns.uri(uri)]
            assert got == {**want, "uri": ns.uri(uri)}, f"{name}: {uri} differs through the hub"
            assert got["mimeType"] == APP_MIME
            assert hub["view"]["reads"][ns.uri(uri)] == [{"uri": ns.uri(uri), "mimeType": APP_MIME,
                                                          "length": len(want["text"])}]
    calls = {c["name"]: c for c in hub["view"]["calls"]}
    for name, own in direct.items():
        for want in own["view"]["calls"]:
            got = calls[want["name"]]  # the view calls the server's own name, not the hub's
            assert "error" not in got and "error" not in want, (got, want)
            assert got["isError"] is want["isError"] is False
            assert [b["type"] for b in got["content"]] == [b["type"] for b in want["content"]]


def all_calls() -> list[dict[str, Any]]:
    return [call for _, calls in EXAMPLES.values() for call in calls]


@pytest.mark.parametrize("era", ERAS)
async def test_the_examples_over_stdio_behind_a_hub_on_stdio_work_as_directly(era, direct, tmp_path):
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"mcpServers": {name: stdio_entry(package) for name, (package, _) in EXAMPLES.items()}}))
    hub_cmd = {"command": sys.executable, "args": ["-m", "hermes_hub", "serve", "--stdio", "--config", str(config)],
               "cwd": str(PROJECT), "env": hub_env()}
    with anyio.fail_after(100):
        seen = await host(hub_cmd, era, all_calls())
    assert seen["protocolVersion"] in (None, "2025-11-25" if era == "legacy" else era)
    check_same(seen, direct)


@pytest.mark.parametrize("era", ERAS)
async def test_the_examples_over_http_behind_a_hub_on_http_work_as_directly(era, direct, tmp_path):
    ports = {name: free_port() for name in EXAMPLES}
    servers = []
    try:
        for name, (package, _) in EXAMPLES.items():
            log = tmp_path / f"{name}.log"
            ctx = process([node(), "--require", str(LOOPBACK_ONLY), str(entry(package))], log,
                          env={"PORT": str(ports[name])})
            servers.append((ctx, ctx.__enter__(), log, ports[name]))
        with anyio.fail_after(30):
            for _, proc, log, port in servers:
                await wait_port(port, proc, log)
        config = {"mcpServers": {name: {"url": f"http://127.0.0.1:{port}/mcp"} for name, port in ports.items()}}
        async with serve_process(config, tmp_path) as served:  # once /readyz: every server settled
            with anyio.fail_after(100):
                seen = await host({"url": served.url}, era, all_calls())
    finally:
        for ctx, *_ in reversed(servers):
            ctx.__exit__(None, None, None)
    check_same(seen, direct)
