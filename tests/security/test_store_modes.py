"""Issue 30, item 13: the store is its OS user's alone. ``hermes-hub serve`` under umask 022 makes its data
folder 0700 and ``hub.db``, ``-wal``, ``-shm`` and the secret key file 0600; a folder and files an earlier
version left 0755 and 0644 are closed on the next start, with a log line naming each change, and what they
held is still there."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import sqlean
from mcp import Client

from hermes_hub.infra.storage.sqlite.privacy import make_private
from tests.support import PROJECT, free_port, wait_http

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@asynccontextmanager
async def serve_with_umask(tmp_path: Path, data: Path, log: Path) -> AsyncIterator[str]:
    """``hermes-hub serve`` started as a shell would with ``umask 022``, its store in ``data``."""
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "memory": {"embedder": "none"}}))
    port = free_port()
    env = {**os.environ, "HERMES_DATA_DIR": str(data)}
    env.pop("HERMES_SECRET_KEY", None)  # the key file beside the store is what is checked
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--port",
                                 str(port)], cwd=PROJECT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=lambda: os.umask(0o022))
    try:
        with anyio.fail_after(30):
            await wait_http(f"http://127.0.0.1:{port}/readyz", proc, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
async def test_a_hub_started_under_umask_022_keeps_its_store_to_its_user(tmp_path):
    data = tmp_path / "data"
    async with serve_with_umask(tmp_path, data, tmp_path / "first.log") as url, Client(url) as host:
        with anyio.fail_after(30):
            created = (await host.call_tool("hermes_session_create", {"title": "payroll notes"})).structured_content
        files = {p.name: mode(p) for p in data.iterdir()}
        folder = mode(data)
    assert folder == 0o700
    assert {name: files.get(name) for name in ("hub.db", "hub.db-wal", "hub.db-shm", "secret.key")} == \
        dict.fromkeys(("hub.db", "hub.db-wal", "hub.db-shm", "secret.key"), 0o600), files
    assert all(m & 0o077 == 0 for m in files.values()), files
    assert "made it private" not in (tmp_path / "first.log").read_text()

    # An earlier version's leftovers: the folder 0755, the database and its WAL files 0644 (a reader keeps
    # the WAL files in place while the hub starts again).
    reader = sqlean.connect(str(data / "hub.db"))
    try:
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
        for path in (data / "hub.db", data / "hub.db-wal", data / "hub.db-shm"):
            path.chmod(0o644)
        data.chmod(0o755)
        log = tmp_path / "second.log"
        async with serve_with_umask(tmp_path, data, log) as url, Client(url) as host:
            with anyio.fail_after(30):
                sessions = (await host.call_tool("hermes_session_list", {})).structured_content
            after = {p.name: mode(p) for p in data.iterdir()}
            folder = mode(data)
    finally:
        reader.close()
    assert folder == 0o700 and all(m & 0o077 == 0 for m in after.values()), after
    line = next(line for line in log.read_text().splitlines() if "made it private" in line)
    assert line.split(" ", 2)[2] == (
        f"WARNING hermes_hub.infra.storage: storage: other OS users could read the store; made it private: "
        f"{data} 0755 -> 0700; {data}/hub.db 0644 -> 0600; {data}/hub.db-wal 0644 -> 0600; "
        f"{data}/hub.db-shm 0644 -> 0600")
    assert [s["session_id"] for s in sessions["sessions"]] == [created["session_id"]]


def test_a_folder_storage_url_names_keeps_its_mode_and_its_files_are_closed(tmp_path):
    project = tmp_path / "project"
    project.mkdir(mode=0o755)
    project.chmod(0o755)
    (project / "hub.db").touch(mode=0o644)
    (project / "hub.db").chmod(0o644)
    changed, note = make_private(project / "hub.db", own_folder=False)
    assert changed == [f"{project}/hub.db 0644 -> 0600"] and mode(project) == 0o755
    assert note is not None and f"chmod 700 {project}" in note and "only their names show" in note
    fresh = tmp_path / "made" / "here" / "hub.db"
    assert make_private(fresh, own_folder=False) == ([], None)
    assert mode(fresh.parent) == 0o700 and mode(fresh) == 0o600 and fresh.stat().st_size == 0
