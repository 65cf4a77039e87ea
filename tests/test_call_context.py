"""The per-call context: every call carries its caller, access fails closed, and what a downstream
sends back during a call reaches the host that made that call."""

from __future__ import annotations

import inspect
import json
import os
import signal
import sys
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from hermes_hub import Hub
from hermes_hub.core.aggregation.catalog import Catalog
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.storage import open_store
from tests.support import PROJECT, free_port, process, served_hub, toy, until, wait_port

pytestmark = pytest.mark.anyio

ANA, BOB_ADMIN = Identity("ana"), Identity("bob", "admin")


def test_no_catalog_method_has_a_default_caller():
    for name, method in inspect.getmembers(Catalog, inspect.isfunction):
        if name.startswith("_"):
            continue
        for p in inspect.signature(method).parameters.values():
            if p.name in ("ctx", "caller", "role"):
                assert p.default is inspect.Parameter.empty, f"Catalog.{name}({p.name}=...) has a default"


async def test_a_call_without_a_context_is_refused_as_a_bug_not_served_as_admin():
    async with Hub(parse_config({"mcpServers": {}})) as hub:
        with pytest.raises(TypeError, match="CallContext"):
            await hub.catalog.call_tool("hermes_hub_status", {}, None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="Identity"):
            hub.catalog.list_tools("admin")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="CallContext"):
            await hub.catalog.read_resource("hub://hermes/status", "admin")  # type: ignore[arg-type]
        names = {t.name for t in hub.catalog.list_tools(ANA)}
        assert "hermes_hub_status" in names and "hermes_hub_reload" not in names


async def test_an_admin_only_builtin_is_unknown_to_a_user_even_when_called_by_name():
    async with Hub(parse_config({"mcpServers": {}})) as hub:
        with pytest.raises(Exception, match="unknown tool 'hermes_hub_reload'"):
            await hub.catalog.call_tool("hermes_hub_reload", {}, CallContext(ANA))
        # the source itself refuses too, whoever routes to it
        with pytest.raises(Exception, match="unknown tool 'hub_reload'"):
            await hub.builtins.call_tool("hub_reload", {}, CallContext(ANA))
        result = await hub.catalog.call_tool("hermes_hub_reload", {}, CallContext(BOB_ADMIN))
        assert result.is_error and "without a config file" in result.content[0].text


async def test_the_session_tools_act_for_the_caller_in_the_context():
    async with Hub(parse_config({"mcpServers": {}})) as hub:
        made = await hub.catalog.call_tool("hermes_session_create", {"title": "ana's"}, CallContext(ANA))
        sid = made.structured_content["session_id"]
        mine = await hub.catalog.call_tool("hermes_session_list", {}, CallContext(ANA))
        theirs = await hub.catalog.call_tool("hermes_session_list", {}, CallContext(Identity("eve")))
        assert [s["session_id"] for s in mine.structured_content["sessions"]] == [sid]
        assert theirs.structured_content["sessions"] == []


@pytest.mark.slow
async def test_a_callers_deadline_cancels_a_slow_downstream_call_and_says_so():
    async with Hub(parse_config({"mcpServers": {"toy": toy(timeout=30)}})) as hub:
        assert await hub.wait_settled(30)
        ctx = CallContext(ANA, deadline=anyio.current_time() + 0.5)
        with anyio.fail_after(10):
            result = await hub.catalog.call_tool("toy_sleep", {"seconds": 20}, ctx)
        assert result.is_error
        assert "server 'toy': tool 'sleep' was cancelled: its caller's deadline passed" in result.content[0].text


@pytest.mark.slow
async def test_two_hosts_calling_at_once_each_get_their_own_downstream_elicitation(tmp_path):
    port = free_port()
    log = tmp_path / "toy.log"
    argv = [sys.executable, "-m", "tests.fixtures.toy_server", "--http", str(port)]
    with process(argv, log) as server:
        with anyio.fail_after(30):
            await wait_port(port, server, log)
        entry = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy"}
        async with served_hub({"mcpServers": {"toy": entry}}, tmp_path) as url:
            asked: dict[str, list[str]] = {"a": [], "b": []}
            both_asked = anyio.Event()

            def host(me: str, ok: bool) -> Any:
                async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
                    asked[me].append(params.message)
                    if asked["a"] and asked["b"]:
                        both_asked.set()
                    await both_asked.wait()  # both calls are in flight with a question open
                    return types.ElicitResult(action="accept", content={"ok": ok})

                return on_elicit

            results: dict[str, str] = {}

            async def call(me: str, ok: bool) -> None:
                async with Client(url, mode="legacy", elicitation_callback=host(me, ok)) as c:
                    r = await c.call_tool("toy_confirm", {"question": f"question for {me}"})
                    results[me] = r.content[0].text

            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "a", True)
                    tg.start_soon(call, "b", False)
    assert asked == {"a": ["question for a"], "b": ["question for b"]}
    assert results == {"a": "accept: True", "b": "accept: False"}


@pytest.mark.slow
async def test_a_restart_while_a_bridged_call_waits_for_the_host_ends_it_with_a_clear_error():
    async with Hub(parse_config({"mcpServers": {"toy": toy(mode="legacy")}})) as hub:
        assert await hub.wait_settled(30)
        conn = hub.pool.connections["toy"]
        old_pid = conn.link.pid

        async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            os.kill(old_pid, signal.SIGKILL)  # the server dies while the person is answering
            with anyio.fail_after(15):
                await hub.pool.wait_for(lambda: conn.ready and conn.link.pid != old_pid)
            return types.ElicitResult(action="accept", content={"ok": True})

        # A 2026-07-28 host: the hub bridges the legacy server's pushed elicitation into rounds.
        async with hub.client(elicitation_callback=on_elicit) as host:
            assert host.protocol_version == "2026-07-28"
            with anyio.fail_after(30):
                result = await host.call_tool("toy_confirm", {"question": "delete it?"})
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("server 'toy': connection lost during the request: process exited (killed by signal 9)")
    assert text.endswith("the call was cancelled, call the tool again")


@pytest.mark.slow
async def test_a_stdio_hub_stopped_by_sigterm_writes_the_audit_rows_of_its_last_calls(tmp_path):
    cfg = tmp_path / "hub.json"
    db = tmp_path / "hub.db"
    cfg.write_text(json.dumps({"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{db}"}}))
    params = StdioServerParameters(command=sys.executable, args=["-m", "hermes_hub", "serve", "--stdio", "--config",
                                                                 str(cfg)], cwd=str(PROJECT), env=dict(os.environ))
    with anyio.fail_after(60):
        async with Client(params) as host:
            for i in range(5):
                await host.call_tool("toy_echo", {"text": f"call {i}"})
            hub_pid = _child_pid_of("--stdio", str(cfg))
            os.kill(hub_pid, signal.SIGTERM)
            await until(lambda: not _alive(hub_pid), timeout=30)
    async with open_store(f"sqlite:///{db}") as store:
        rows = await store.query_audit(limit=100)
    assert sorted(r.tool for r in rows) == ["toy_echo"] * 5


def _child_pid_of(*words: str) -> int:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in cmdline]
        if all(w in args for w in words) and "serve" in args:
            return int(pid)
    raise AssertionError(f"no hub process with {words}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False
