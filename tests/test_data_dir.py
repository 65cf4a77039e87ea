"""Tests never touch a user's data directory: every hub they start as a process keeps its own store."""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from hermes_hub.services import audit
from hermes_hub.infra.storage import open_store
from tests.support import PROJECT, hub_env, served_hub, stdio_hub, toy, until_listed

pytestmark = pytest.mark.anyio


def test_the_suite_runs_with_a_home_that_is_not_the_users():
    assert Path(os.environ["HOME"]) != Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert os.environ["XDG_DATA_HOME"].startswith(os.environ["HOME"])


async def tools_called(data_dir: str) -> list[str]:
    async with open_store(f"sqlite:///{Path(data_dir) / 'hub.db'}") as store:
        return [r.tool for r in await audit.query(store, "t", admin=True)]


@pytest.mark.slow
async def test_hubs_spawned_with_a_cut_down_environment_leave_home_untouched(tmp_path, monkeypatch):
    # As the reporter ran it: HOME elsewhere, the data dir derived from it.
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME")
    # The suite's spawn paths: an HTTP hub (full environment), a hub it starts as a stdio child (the hub's
    # transport passes an allow-list only), and a host spawning a stdio hub through the SDK (the same).
    inner = stdio_hub({"mcpServers": {"toy": toy()}}, tmp_path / "inner.json")
    async with served_hub({"mcpServers": {"c": inner}}, tmp_path) as url:
        with anyio.fail_after(30):
            async with Client(url) as host:
                await until_listed(host, "c_toy_echo", timeout=None)  # bounded above
                echoed = await host.call_tool("c_toy_echo", {"text": "kept apart"})
    (tmp_path / "host.json").write_text('{"mcpServers": {}}')
    spawned = hub_env()
    params = StdioServerParameters(command=sys.executable, args=["-m", "hermes_hub", "serve", "--stdio", "--config",
                                                           str(tmp_path / "host.json")], cwd=str(PROJECT), env=spawned)
    with anyio.fail_after(30):
        async with Client(params) as host:
            status = await host.call_tool("hermes_hub_status", {})

    assert echoed.content[0].text == "kept apart" and not status.is_error
    assert not (home / ".local").exists(), sorted(str(p) for p in home.rglob("*"))
    assert await tools_called(os.environ["HERMES_DATA_DIR"]) == ["c_toy_echo"]
    assert await tools_called(inner["env"]["HERMES_DATA_DIR"]) == ["toy_echo"]
    assert await tools_called(spawned["HERMES_DATA_DIR"]) == ["hermes_hub_status"]
