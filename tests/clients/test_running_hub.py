"""A command finds the hub that already serves its hub.json and talks to it, saying so in one line (issue 33
item 2): no second hub, no second set of children. `--in-process` builds one anyway; a hub that stopped, even
killed, is not mistaken for a live one; a hub that needs a token is used only with one."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support import PROJECT, demo, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ADMIN = "alice-admin-token-0123456789abcdef"


def cli(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args, "--config", str(config)], capture_output=True,
                          text=True, timeout=120, cwd=PROJECT, env={**os.environ, **(env or {})})


def notes_pid(shown: subprocess.CompletedProcess[str]) -> int:
    assert shown.returncode == 0, shown.stderr
    [notes] = [s for s in json.loads(shown.stdout)["servers"] if s["name"] == "notes"]
    return notes["pid"]


async def served_notes_pid(host: Client) -> int:
    status = (await host.call_tool("hermes_hub_status", {})).structured_content
    return next(s for s in status["servers"] if s["name"] == "notes")["pid"]


def counted(entry: dict[str, Any], stamp: Path) -> dict[str, Any]:
    """``entry`` started through a shell that first adds a line to ``stamp``: one line per start of it."""
    line = " ".join(shlex.quote(a) for a in [entry["command"], *entry["args"]])
    return {**entry, "command": "sh", "args": ["-c", f"echo started >> {shlex.quote(str(stamp))}; exec {line}"]}


async def test_a_command_talks_to_the_hub_serving_its_config_and_says_so(tmp_path):
    stamp = tmp_path / "notes-started"
    config = {"mcpServers": {"notes": counted(demo("notes", tmp_path / "demo"), stamp)}}
    async with serve_process(config, tmp_path) as served, Client(served.url) as host:
        line = (f"talking to the hub serving {served.config} at {served.url} (pid {served.proc.pid}); "
                f"--in-process builds one here\n")
        shown = cli(served.config, "servers", "--json")
        assert shown.stderr == line
        assert notes_pid(shown) == await served_notes_pid(host)  # the served hub's own child, not a new one

        made = cli(served.config, "call", "notes_create_note", "--args", '{"title": "t", "body": "milk"}')
        assert made.returncode == 0 and made.stderr == line
        found = await host.call_tool("notes_search_notes", {"query": "milk"})
        assert "milk" in json.dumps(found.structured_content)

        await host.call_tool("hermes_memory_remember", {"text": "Alice's sister is called Juno"})
        recalled = cli(served.config, "memory", "recall", "what is my sister called", "--json")
        assert recalled.returncode == 0, recalled.stderr
        assert recalled.stderr == line.replace("--in-process builds one here", "--user works on the store here")
        assert "Juno" in json.dumps(json.loads(recalled.stdout))
        listed = cli(served.config, "memory", "list", "--json", "--user", "bob")  # another user: the store here
        assert listed.returncode == 0 and "talking to" not in listed.stderr and json.loads(listed.stdout) == []
        assert stamp.read_text().count("started") == 1  # every command so far was the served hub's: no second notes

        here = cli(served.config, "servers", "--json", "--in-process")
        assert "talking to" not in here.stderr and notes_pid(here) != await served_notes_pid(host)

        other = tmp_path / "other.json"  # another file is another hub, even on the same store
        other.write_text(json.dumps(config))
        assert "talking to" not in cli(other, "servers", "--json").stderr

        served.proc.send_signal(signal.SIGKILL)  # no goodbye: the presence file stays, its lock goes
        served.proc.wait(30)
    after = cli(served.config, "servers", "--json")
    assert after.returncode == 0 and "talking to" not in after.stderr


async def test_a_hub_that_needs_a_token_is_talked_to_only_with_one(tmp_path):
    config = {"mcpServers": {"notes": demo("notes", tmp_path / "demo")},
              "auth": {"tokens": [{"token": ADMIN, "user": "alice", "role": "admin"}]}}
    async with serve_process(config, tmp_path) as served:
        without = cli(served.config, "tools")
        assert without.returncode == 0 and "talking to" not in without.stderr  # built here, as the local user
        with_token = cli(served.config, "tools", env={"HERMES_TOKEN": ADMIN})
        assert with_token.returncode == 0 and with_token.stderr.startswith(
            f"talking to the hub serving {served.config} at {served.url}")
        assert "notes_create_note" in with_token.stdout
