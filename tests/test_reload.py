"""Hot reload: only changed servers restart, added ones start, removed ones stop, bad configs are refused."""

from __future__ import annotations

import json
import logging
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
from tests.support import PROJECT, serve_process, toy, until, until_listed

pytestmark = pytest.mark.anyio


def write(path, servers: dict[str, Any]) -> None:
    path.write_text(json.dumps({"mcpServers": servers}))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
async def test_a_changed_file_restarts_only_changed_servers_and_hosts_hear_list_changed(tmp_path):
    cfg = tmp_path / "hub.json"
    write(cfg, {"keep": toy("--name", "keep"), "change": toy("--name", "old"), "drop": toy()})
    notices: list[str] = []
    noticed = anyio.Event()

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            notices.append("tools")
            noticed.set()

    async with Hub.from_file(cfg) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
        pids = {name: c.link.pid for name, c in hub.pool.connections.items()}
        async with hub.client(mode="legacy", message_handler=on_message) as host:
            write(cfg, {"keep": toy("--name", "keep"), "change": toy("--name", "new"), "add": toy("--name", "add")})
            with anyio.fail_after(30):
                await hub.pool.wait_for(lambda: set(hub.pool.connections) == {"keep", "change", "add"}
                                        and hub.pool.settled)
                await noticed.wait()
            names = {t.name for t in (await host.list_tools()).tools}
            changed = await host.call_tool("change_whoami", {})
            added = await host.call_tool("add_whoami", {})
        after = {name: c.link.pid for name, c in hub.pool.connections.items()}
    assert after["keep"] == pids["keep"]
    assert after["change"] != pids["change"]
    assert not alive(pids["drop"]) and not alive(pids["change"])
    assert "drop_echo" not in names and "add_echo" in names
    assert changed.content[0].text == "new" and added.content[0].text == "add"


async def test_an_invalid_new_config_is_refused_with_a_log_line_and_the_running_one_stays(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="hermes_hub")
    cfg = tmp_path / "hub.json"
    write(cfg, {"toy": toy()})
    async with Hub.from_file(cfg) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
        pid = hub.pool.connections["toy"].link.pid
        cfg.write_text(json.dumps({"mcpServers": {"toy": {**toy(), "prefx": "t"}}}))
        await until(lambda: "not reloading" in caplog.text, timeout=10)  # the watcher logs and keeps the old config
        async with hub.client() as host:
            echoed = await host.call_tool("toy_echo", {"text": "still here"})
        assert hub.pool.connections["toy"].link.pid == pid
    assert "mcpServers.toy.prefx: unknown key; did you mean 'prefix'?" in caplog.text
    assert "The running configuration stays in force." in caplog.text
    assert echoed.content[0].text == "still here"


async def tool_names(host: Client) -> set[str]:
    return {t.name for t in (await host.list_tools()).tools}


@pytest.mark.slow
async def test_the_shipped_serve_command_reloads_when_hub_json_changes(tmp_path):
    async with serve_process({"mcpServers": {"one": toy("--name", "one")}}, tmp_path) as served:
        async with Client(served.url) as host:
            with anyio.fail_after(30):
                assert "one_whoami" in await tool_names(host)
                write(served.config, {"one": toy("--name", "one"), "two": toy("--name", "two")})
                await until_listed(host, "two_whoami", timeout=None)  # bounded above
            answer = await host.call_tool("two_whoami", {})
    assert answer.content[0].text == "two"
    assert "reloaded" in served.log.read_text() and "(file changed)" in served.log.read_text()


@pytest.mark.parametrize("stdio", [False, True], ids=["http", "stdio"])
@pytest.mark.slow
async def test_sighup_reloads_a_serving_hub_instead_of_stopping_it(tmp_path, stdio):
    cfg = tmp_path / "hub.json"
    write(cfg, {"one": toy("--name", "one")})
    if stdio:
        params = StdioServerParameters(command=sys.executable, args=["-m", "hermes_hub", "serve", "--stdio",
                                                                     "--config", str(cfg)],
                                       cwd=str(PROJECT), env=dict(os.environ))
        with anyio.fail_after(60):
            async with Client(params) as host:
                pid = _serving(cfg)
                assert await _reload_by_sighup(host, cfg, pid) == "two"
                still = await host.call_tool("one_whoami", {})
        assert still.content[0].text == "one"
        return
    async with serve_process({"mcpServers": {"one": toy("--name", "one")}}, tmp_path) as served:
        async with Client(served.url) as host:
            with anyio.fail_after(60):
                assert await _reload_by_sighup(host, served.config, served.proc.pid) == "two"
        assert served.proc.poll() is None, "SIGHUP stopped the hub"
        await until(lambda: "(SIGHUP)" in served.log.read_text(), timeout=10)


async def _reload_by_sighup(host: Client, cfg, pid: int) -> str:
    """Change the file and send SIGHUP at once; the new server's tool answers once reloaded."""
    write(cfg, {"one": toy("--name", "one"), "two": toy("--name", "two")})
    os.kill(pid, signal.SIGHUP)
    await until_listed(host, "two_whoami", timeout=None)  # the caller bounds the wait
    return (await host.call_tool("two_whoami", {})).content[0].text


def _serving(cfg) -> int:
    """The pid of the hub process serving ``cfg``."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "serve" in args and str(cfg) in args:
            return int(pid)
    raise AssertionError(f"no hub process serving {cfg}")
