"""Hub tokens made, listed and revoked with the real `hermes-hub token` commands against a served hub's
store, for the attacks on what must follow a person's live tokens (tests/oauth/test_standing.py and
tests/schedules/test_standing.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from tests.support import PROJECT

CARD = "SECRET-PAYROLL-42"  # what the admin-only server's tool echoes: seen only by an admin


async def cli(path: Path, *args: str) -> str:
    """``hermes-hub ARGS --config PATH``, the real command against the served hub's store: its stdout."""
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(path)], cwd=PROJECT,
                                   check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


async def token(path: Path, user: str, role: str = "user") -> tuple[str, str]:
    """A token made with ``hermes-hub token create``: (the token, its id)."""
    secret = (await cli(path, "token", "create", user, "--role", role)).strip()
    listed = json.loads(await cli(path, "token", "list", "--json"))
    return secret, next(t["id"] for t in reversed(listed) if t["user"] == user and t.get("kind") != "oauth")


async def tokens_before_start(tmp_path: Path, cfg: dict[str, Any],
                              *users: tuple[str, str]) -> dict[str, tuple[str, str]]:
    """Tokens in the store before the hub starts (so it requires them): user -> (token, id)."""
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(cfg))
    return {user: await token(path, user, role) for user, role in users}
