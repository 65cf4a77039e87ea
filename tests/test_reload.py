"""Hot reload: only changed servers restart, added ones start, removed ones stop, bad configs are refused."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from hermes_hub import Hub, load_config
from tests.support import toy

pytestmark = pytest.mark.anyio


def write(path, servers: dict[str, Any]) -> None:
    path.write_text(json.dumps({"mcpServers": servers}))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_changed_file_restarts_only_changed_servers_and_hosts_hear_list_changed(tmp_path):
    cfg = tmp_path / "hub.json"
    write(cfg, {"keep": toy("--name", "keep"), "change": toy("--name", "old"), "drop": toy()})
    notices: list[str] = []

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            notices.append("tools")

    async with Hub(load_config(cfg), config_path=cfg) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
        pids = {name: c.link.pid for name, c in hub.pool.connections.items()}
        async with Client(hub.server, mode="legacy", message_handler=on_message) as host:
            write(cfg, {"keep": toy("--name", "keep"), "change": toy("--name", "new"), "add": toy("--name", "add")})
            with anyio.fail_after(30):
                while set(hub.pool.connections) != {"keep", "change", "add"} or not hub.pool.settled:
                    await anyio.sleep(0.05)
                while not notices:
                    await anyio.sleep(0.05)
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
    async with Hub(load_config(cfg), config_path=cfg) as hub:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
        pid = hub.pool.connections["toy"].link.pid
        cfg.write_text(json.dumps({"mcpServers": {"toy": {**toy(), "prefx": "t"}}}))
        with anyio.fail_after(10):
            while "not reloading" not in caplog.text:
                await anyio.sleep(0.05)
        async with Client(hub.server) as host:
            echoed = await host.call_tool("toy_echo", {"text": "still here"})
        assert hub.pool.connections["toy"].link.pid == pid
    assert "mcpServers.toy.prefx: unknown key; did you mean 'prefix'?" in caplog.text
    assert "The running configuration stays in force." in caplog.text
    assert echoed.content[0].text == "still here"
