"""No orphans: however the hub stops, every child server it started is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import PROJECT, free_port, toy

pytestmark = pytest.mark.slow


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def gone(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # exited; its parent (dead too) can no longer reap it


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # poll interval; the loop is bounded by the deadline


def start_hub(tmp_path: Path, stdio: bool) -> subprocess.Popen[bytes]:
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {"a": toy("--name", "a"), "b": toy("--name", "b")}}))
    argv = [sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg)]
    argv += ["--stdio"] if stdio else ["--port", str(free_port())]
    with (tmp_path / "hub.log").open("wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(argv, cwd=PROJECT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)


@pytest.mark.parametrize("stdio, how", [
    (False, "SIGTERM"), (False, "SIGINT"), (True, "SIGTERM"), (True, "stdin closed"), (True, "SIGKILL"),
    (False, "SIGKILL"),
])
def test_every_child_is_gone_after_the_hub_stops(tmp_path, stdio, how):
    hub = start_hub(tmp_path, stdio)
    try:
        wait_for(lambda: len(children_of(hub.pid)) == 2, 20, "two child servers")
        kids = children_of(hub.pid)
        if how == "stdin closed":
            hub.stdin.close()
        else:
            hub.send_signal(getattr(signal, how))
        hub.wait(timeout=20)
        wait_for(lambda: all(gone(k) for k in kids), 10, f"children {kids} to exit")
    finally:
        if hub.poll() is None:
            hub.kill()
            hub.wait()
        hub.stdin.close()
        for k in children_of(hub.pid):
            os.kill(k, signal.SIGKILL)
