"""The status page's test hubs: three static tokens, agent runs of two users, a real Chromium."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import RunRecord, utcnow
from tests.support import PROJECT, Served, toy

CHROMIUM = "/usr/bin/chromium"  # Debian's package (.ci/run installs it); Playwright's own download cannot work here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef",
          "root": "root-token-0123456789abcdef"}
ROLES = {"alice": "user", "bob": "user", "root": "admin"}


def hub_config(*, tokens: bool, alpha_cwd: Path | None = None) -> dict[str, Any]:
    """Two toy servers. Alpha may run in ``alpha_cwd``: remove that folder and kill alpha, and it cannot
    come back (a crash after a stable run restarts at once, quicker than the page's poll)."""
    alpha = toy("--name", "alpha")
    if alpha_cwd is not None:
        alpha_cwd.mkdir(exist_ok=True)
        alpha.update(cwd=str(alpha_cwd), env={"PYTHONPATH": str(PROJECT)})
    config: dict[str, Any] = {"mcpServers": {"alpha": alpha, "beta": toy("--name", "beta")}}
    if tokens:
        config["auth"] = {"tokens": [{"token": t, "user": u, "role": ROLES[u]} for u, t in TOKENS.items()]}
    return config


async def seed_runs(*users: str, task: str = "secret plans of {user}") -> dict[str, str]:
    """One finished agent run per user, in the store the served hub uses; returns each user's run id."""
    ids = {}
    now = utcnow()
    async with open_store() as store:
        for user in users:
            run_id = f"run_{user}_1"
            await store.add_run(RunRecord(
                run_id=run_id, user_id=user, session_id=f"ses_{user}", profile="default",
                task=task.format(user=user), started_at=now - timedelta(seconds=5), ended_at=now,
                stop_reason="answered", rounds=2, input_tokens=120, output_tokens=30, answer=f"done for {user}",
                trace=[{"at": 0.0, "kind": "budget", "profile": "default", "tools_offered": 3},
                       {"at": 0.1, "kind": "request", "round": 1, "provider": "scripted", "input_tokens": 60,
                        "output_tokens": 10, "tool_calls": 1},
                       {"at": 0.2, "kind": "tool", "round": 1, "name": "alpha_echo", "server": "alpha",
                        "outcome": "ok", "seconds": 0.01, "result_chars": 5},
                       {"at": 0.3, "kind": "request", "round": 2, "provider": "scripted", "input_tokens": 60,
                        "output_tokens": 20, "tool_calls": 0}],
                rating="up"))
            ids[user] = run_id
    return ids


def need_chromium() -> None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs it with `apt-get install -y chromium`")
        pytest.skip(f"{CHROMIUM} is missing; install it with `apt-get install -y chromium`")


@asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    """Headless Chromium from Debian, driven by Playwright (its own browser download is never used)."""
    need_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


def base_url(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


async def cli(served: Served, *args: str) -> str:
    """``hermes-hub ARGS --config <the served hub's hub.json>`` (e.g. ``token revoke``): its stdout."""
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(served.config)],
                                   cwd=PROJECT, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


async def store_token(served: Served, user: str) -> tuple[str, str]:
    """A token created with ``hermes-hub token create USER`` in the served hub's store: (token, its id)."""
    token = (await cli(served, "token", "create", user)).strip()
    listed = (await cli(served, "token", "list")).splitlines()
    return token, next(line.split()[0] for line in reversed(listed) if f" {user} " in f" {line} ")
