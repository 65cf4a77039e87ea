"""A hub.json around the drifting fixture server, and the CLI as a real subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from tests.support import PROJECT


def drifting(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry running ``tests.fixtures.drifting_server``, its changes read from ``tools.json``."""
    env = {"DRIFT_FILE": str(tmp_path / "tools.json"), **extra.pop("env", {})}
    return {"command": sys.executable, "args": ["-m", "tests.fixtures.drifting_server"], "cwd": str(PROJECT),
            "env": env, **extra}


def hub_json(tmp_path: Path, pin: str = "auto", **server: Any) -> dict[str, Any]:
    return {"mcpServers": {"drifty": drifting(tmp_path, **server)}, "hub": {"pin": pin},
            "storage": {"url": f"sqlite:///{tmp_path / 'hub.db'}"}}


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config))
    return path


def change(tmp_path: Path, **tools: dict[str, Any]) -> None:
    """What the drifting server says of its tools from its next listing on."""
    (tmp_path / "tools.json").write_text(json.dumps(tools))


async def cli(*args: str) -> tuple[int, str]:
    """``hermes-hub ARGS`` as a process: its exit status and its output (stdout, then stderr)."""
    with anyio.fail_after(90):
        run = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args], cwd=PROJECT, check=False)
    return run.returncode, run.stdout.decode() + run.stderr.decode()


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)
