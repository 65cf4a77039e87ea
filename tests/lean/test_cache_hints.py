"""Cache hints (2026-07-28 ``ttlMs``/``cacheScope``) through a served hub, with real SDK clients in both
eras: a server's hints pass through, a merged list gets the smallest ttl and the narrowest scope, a list
that depends on the caller's role is never public, and a list_changed voids a hint at once."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from hermes_hub.app.hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import PROJECT, hub_env, serve_process, toy, until

pytestmark = pytest.mark.anyio


def hinting(name: str, ttl: int, scope: str, **extra: Any) -> dict[str, Any]:
    """A hub.json entry for the hinting fixture, talked to at 2026-07-28 (the era that carries hints)."""
    return {"command": sys.executable, "args": ["-m", "tests.lean.hinting_server", "--name", name, "--ttl", str(ttl),
                                                "--scope", scope], "cwd": str(PROJECT), "mode": "2026-07-28", **extra}


def config(tmp_path: Any, **servers: dict[str, Any]) -> dict[str, Any]:
    toolsets = {name: {"servers": [name]} for name in servers}
    toolsets.update({"slow_fast": {"servers": ["slow", "fast"]}, "slow_shy": {"servers": ["slow", "shy"]}})
    return {"mcpServers": servers, "toolsets": {k: v for k, v in toolsets.items() if set(v["servers"]) <= set(servers)},
            "memory": {"embedder": "none"}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}}


async def listings(url: str, mode: str = "auto") -> dict[str, Any]:
    async with Client(url, mode=mode, cache=None) as host:
        with anyio.fail_after(30):
            return {"tools/list": await host.list_tools(), "resources/list": await host.list_resources(),
                    "resources/templates/list": await host.list_resource_templates(),
                    "prompts/list": await host.list_prompts()}


@pytest.mark.slow
async def test_a_servers_hints_pass_through_to_a_2026_host_and_a_handshake_era_host_gets_none(tmp_path):
    async with serve_process(config(tmp_path, slow=hinting("slow", 30_000, "public")), tmp_path) as served:
        modern = await listings(f"{served.url}/slow")
        legacy = await listings(f"{served.url}/slow", "legacy")
        async with Client(f"{served.url}/slow", cache=None) as host, Client(f"{served.url}/slow", mode="legacy",
                                                                             cache=None) as old:
            with anyio.fail_after(30):
                read = await host.read_resource("doc://slow/readme")
                old_read = await old.read_resource("doc://slow/readme")
    for method, result in modern.items():
        assert 0 < result.ttl_ms <= 30_000 and result.cache_scope == "public", method  # counted from the fetch
    assert (read.ttl_ms, read.cache_scope, read.contents[0].text) == (30_000, "public", "read me")
    for result in [*legacy.values(), old_read]:  # the handshake era has no hints: none on the wire
        assert "ttl_ms" not in result.model_fields_set and "cache_scope" not in result.model_fields_set
    assert [t.name for t in modern["tools/list"].tools] == [t.name for t in legacy["tools/list"].tools] == [
        "slow_forecast", "slow_grow"]  # the same order in both eras


@pytest.mark.slow
async def test_a_merged_list_gets_the_smallest_ttl_and_the_narrowest_scope_of_its_parts(tmp_path):
    servers = {"slow": hinting("slow", 30_000, "public"), "fast": hinting("fast", 4_000, "public"),
               "shy": hinting("shy", 50_000, "private")}
    async with serve_process(config(tmp_path, **servers), tmp_path) as served:
        slow_fast = await listings(f"{served.url}/slow_fast")
        slow_shy = await listings(f"{served.url}/slow_shy")
        again = await listings(f"{served.url}/slow_fast")
    for method in slow_fast:
        assert 0 < slow_fast[method].ttl_ms <= 4_000 and slow_fast[method].cache_scope == "public", method
        assert 4_000 < slow_shy[method].ttl_ms <= 30_000 and slow_shy[method].cache_scope == "private", method
    names = [t.name for t in slow_fast["tools/list"].tools]
    assert names == ["slow_forecast", "slow_grow", "fast_forecast", "fast_grow"]  # config order, every time
    assert [t.name for t in again["tools/list"].tools] == names


@pytest.mark.slow
async def test_a_list_that_depends_on_the_callers_role_is_never_public(tmp_path):
    servers = {"slow": hinting("slow", 30_000, "public", tool_roles={"grow": ["ops"]}),
               "fast": hinting("fast", 30_000, "public", roles=["ops"])}
    async with serve_process(config(tmp_path, **servers), tmp_path) as served:
        whole = await listings(served.url)  # the hub's own tools hold admin-only ones
        slow = await listings(f"{served.url}/slow")  # one tool only for role 'ops'
        fast = await listings(f"{served.url}/fast")  # the whole server only for role 'ops'
    assert whole["tools/list"].cache_scope == slow["tools/list"].cache_scope == "private"
    assert slow["resources/list"].cache_scope == "public"  # every caller sees slow's resources
    assert all(result.cache_scope == "private" for result in fast.values())
    assert 0 < whole["tools/list"].ttl_ms <= 30_000  # the hub's own part: hub.cache_ttl_ms (60 s), the smaller wins


@pytest.mark.slow
async def test_a_list_changed_voids_the_hint_at_once_and_the_new_list_gets_a_fresh_one(tmp_path):
    async with serve_process(config(tmp_path, slow=hinting("slow", 30_000, "public")), tmp_path) as served:
        async with Client(f"{served.url}/slow", cache=None) as host, Client(f"{served.url}/slow", mode="legacy",
                                                                             cache=None) as old:
            with anyio.fail_after(30):
                before = await host.list_tools()
                await host.call_tool("slow_grow", {"hold_s": 3})  # the hub's next listing of it takes 3 s

                async def stale() -> Any:
                    listed = await host.list_tools()
                    return listed if listed.ttl_ms == 0 else None

                voided = await until(stale, timeout=10)  # while the hub re-lists: its copy is stale, ttl 0
                legacy = await old.list_tools()
                renewed = await until(lambda: _listed_with(host, "slow_added_1"), timeout=20)
    assert before.ttl_ms > 20_000
    assert [t.name for t in voided.tools] == ["slow_forecast", "slow_grow"]  # the old list, said to be stale
    assert "ttl_ms" not in legacy.model_fields_set  # a handshake-era host is unaffected
    assert renewed.ttl_ms > 20_000 and renewed.cache_scope == "public"


async def _listed_with(host: Client, name: str) -> Any:
    listed = await host.list_tools()
    return listed if name in {t.name for t in listed.tools} else None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_hints_reach_a_2026_host_over_stdio_too_and_a_handshake_era_one_gets_none(tmp_path, mode):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps(config(tmp_path, slow=hinting("slow", 30_000, "public"))))
    params = StdioServerParameters(command=sys.executable, cwd=str(PROJECT), env=hub_env(), args=[
        "-m", "hermes_hub", "serve", "--stdio", "--toolset", "slow", "--config", str(cfg)])
    with anyio.fail_after(60):
        async with Client(stdio_client(params), mode=mode, cache=None) as host:
            listed = await until(lambda: _listed_with(host, "slow_forecast"), timeout=30)  # ready servers join
    if mode == "auto":
        assert 20_000 < listed.ttl_ms <= 30_000 and listed.cache_scope == "public"
    else:
        assert "ttl_ms" not in listed.model_fields_set


async def test_a_list_served_while_a_server_starts_is_vouched_for_no_time_so_a_caching_host_sees_it_come(tmp_path):
    """A 2026-07-28 host that caches lists by their ttlMs and does not listen for list_changed must not keep
    a list served before a server was READY: it is vouched for 0 ms; once every server is up, the hub's ttl."""
    raw = {"mcpServers": {"slow": toy("--start-delay", "1.5"), "dead": toy("--exit-after-start", "1")},
           "memory": {"embedder": "none"}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
           "hub": {"first_list_wait": 0}}
    async with Hub(parse_config(raw)) as hub:
        async with hub.client() as caching, hub.client(cache=None) as plain:  # the SDK's client caches by ttlMs
            early = await plain.list_tools()
            assert not any(t.name.startswith("slow_") for t in (await caching.list_tools()).tools)
            assert await hub.wait_settled(30)
            with anyio.fail_after(30):
                while not any(t.name.startswith("slow_") for t in (await caching.list_tools()).tools):
                    await anyio.sleep(0.05)  # polling the host's own cache: it must let the new list through
            settled = await plain.list_tools()
        assert early.ttl_ms == 0 and settled.ttl_ms == 0  # "dead" never comes up: nothing is vouched for
        hub.config.mcp_servers.pop("dead")
        await hub.reload(hub.config)
        async with hub.client(cache=None) as plain:
            assert (await plain.list_tools()).ttl_ms == 60_000  # every server READY: hub.cache_ttl_ms
