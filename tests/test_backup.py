"""`hermes-hub backup FILE` copies the store while the hub serves and writes while it does; the secret key
goes apart, to FILE.key; `hermes-hub restore FILE` is refused over a serving hub and otherwise brings the
store back: a hub on it recalls the same memories and opens the same secrets (issue 33 item 4)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from hermes_hub.infra.config.sections import SECRET_KIND
from hermes_hub.infra.storage import open_store
from hermes_hub.services.vault import Vault, load_hub_key
from tests.support import PROJECT, demo, serve_process, until

pytestmark = pytest.mark.anyio
TOKEN = "ghp_restored_secret_value_0123456789"


def cli(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HERMES_SECRET_KEY"}
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args, "--config", str(tmp_path / "hub.json")],
                          capture_output=True, text=True, timeout=120, cwd=PROJECT, input=stdin, env=env)


def config(tmp_path: Path) -> dict:
    return {"mcpServers": {"notes": demo("notes", tmp_path / "demo")},
            "storage": {"url": "sqlite:///data/hub.db"}}


async def titles(path: Path, new: str | None = None) -> set[str]:
    """The session titles of alice in the store at ``path`` (after creating ``new``), through the hub's tools."""
    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    cfg = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{path}"}, "auth": {"local_user": "alice"}})
    async with Hub(cfg) as hub, hub.client() as host:
        if new:
            await host.call_tool("hermes_session_create", {"title": new})
        listed = await host.call_tool("hermes_session_list", {})
    return {s["title"] for s in listed.structured_content["sessions"]}


async def recall(host: Client, query: str) -> list[str]:
    found = await host.call_tool("hermes_memory_recall", {"query": query, "sources": ["memories"], "limit": 3})
    return [item["text"] for item in found.structured_content["items"]]


@pytest.mark.slow
async def test_a_backup_taken_while_serving_restores_memories_and_secrets(tmp_path, monkeypatch):
    monkeypatch.delenv("HERMES_SECRET_KEY", raising=False)
    store, key = tmp_path / "data" / "hub.db", tmp_path / "data" / "secret.key"
    backup = tmp_path / "backups" / "monday.db"
    backup.parent.mkdir()
    async with serve_process(config(tmp_path), tmp_path) as served, Client(served.url) as host:
        await host.call_tool("hermes_memory_remember", {"text": "My sister Ana lives in Porto"})
        assert cli(tmp_path, "secret", "set", "GITHUB_TOKEN", "--user", "alice", stdin=TOKEN).returncode == 0

        async def more(i: int) -> None:  # writes in flight while the copy is taken
            await host.call_tool("hermes_memory_remember", {"text": f"filler fact number {i}"})

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(more, i)
            took = await anyio.to_thread.run_sync(lambda: cli(tmp_path, "backup", str(backup)))
        assert took.returncode == 0, took.stderr
        lines = took.stdout.splitlines()
        assert lines[0].startswith(f"backed up {store} to {backup} (0 sessions, 0 messages, ")
        assert lines[1] == (f"the secret key is in {backup}.key, apart from the store: keep it somewhere other than "
                            f"{backup} (whoever holds both can open every stored secret)")
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600 == stat.S_IMODE(Path(f"{backup}.key").stat().st_mode)
        assert Path(f"{backup}.key").read_bytes() == key.read_bytes()

        refused = cli(tmp_path, "restore", str(backup))
        assert refused.returncode == 1
        assert refused.stderr == (f"error: a hub serves this store now (pid {served.proc.pid} at {served.url}); "
                                  f"stop it, then restore. Nothing was changed\n")
        assert "Porto" in " ".join(await recall(host, "where does Ana live?"))  # the serving hub is untouched
        served.proc.send_signal(signal.SIGTERM)
        served.proc.wait(30)

    for lost in (store, key, Path(f"{store}-wal"), Path(f"{store}-shm")):  # the disk is gone
        lost.unlink(missing_ok=True)
    put = cli(tmp_path, "restore", str(backup))
    assert put.returncode == 0, put.stderr
    assert put.stdout.splitlines()[0].startswith(f"restored {store} from {backup} (0 sessions, 0 messages, ")
    assert put.stdout.splitlines()[-1] == f"the secret key from {backup}.key is now {key}"

    async with serve_process(config(tmp_path), tmp_path) as served, Client(served.url) as host:
        async def porto() -> bool:
            return "My sister Ana lives in Porto" in await recall(host, "where does Ana live?")

        await until(porto, timeout=60)
    async with open_store(f"sqlite:///{store}") as opened:
        vault = Vault(opened, load_hub_key(f"sqlite:///{store}", env={}))
        assert await vault.get("alice", SECRET_KIND, "GITHUB_TOKEN") == TOKEN


@pytest.mark.slow
async def test_restore_keeps_the_store_it_replaces_and_refuses_what_is_no_backup(tmp_path, monkeypatch):
    monkeypatch.delenv("HERMES_SECRET_KEY", raising=False)
    (tmp_path / "hub.json").write_text(json.dumps(config(tmp_path)))
    store = tmp_path / "data" / "hub.db"
    async with open_store(f"sqlite:///{store}"):
        pass  # a store and no key yet
    empty = cli(tmp_path, "backup", str(tmp_path / "empty.db"))
    assert empty.stdout.splitlines()[1] == "there is no secret key yet (nothing is sealed): the backup is the store alone"
    assert not Path(f"{tmp_path / 'empty.db'}.key").exists()
    assert await titles(store, "before") == {"before"}
    took = cli(tmp_path, "backup", str(tmp_path / "b.db"))
    assert took.returncode == 0, took.stderr

    again = cli(tmp_path, "backup", str(tmp_path / "b.db"))
    assert again.returncode == 1 and again.stderr == (
        f"error: {tmp_path / 'b.db'} exists; nothing was written. Give a new file name, or move it away\n")

    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("hello")
    other_db = tmp_path / "other.db"
    import sqlite3
    with sqlite3.connect(other_db) as db:
        db.execute("CREATE TABLE t (x)")
    for bad, says in ((not_a_db, f"{not_a_db} is not an SQLite database, so not a hermes-hub backup"),
                      (other_db, f"{other_db} is an SQLite database but not a hermes-hub store (it has no "
                                 f"schema_migrations table)")):
        refused = cli(tmp_path, "restore", str(bad))
        assert refused.returncode == 1 and refused.stderr == f"error: {says}\n"
    assert await titles(store, "after the backup") == {"before", "after the backup"}  # intact after the refusals

    put = cli(tmp_path, "restore", str(tmp_path / "b.db"))
    assert put.returncode == 0, put.stderr
    [kept] = [line.removeprefix("the store it replaced is kept as ") for line in put.stdout.splitlines()
              if line.startswith("the store it replaced")]
    assert await titles(store) == {"before"}
    assert await titles(Path(kept)) == {"before", "after the backup"}


def test_a_postgresql_store_is_pointed_at_pg_dump(tmp_path):
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {}, "storage": {"url": "postgresql://h/db"}}))
    for command in ("backup", "restore"):
        if command == "restore":
            (tmp_path / "b.db").write_bytes(b"")
        done = cli(tmp_path, command, str(tmp_path / "b.db"))
        assert done.returncode == 2
        assert done.stderr == ("error: a PostgreSQL store is backed up and restored with pg_dump and pg_restore (see "
                               "docs/operations.md, Backups); these commands copy an SQLite store\n")
