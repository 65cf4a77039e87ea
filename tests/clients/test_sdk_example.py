"""The Python SDK clients in docs/catalog.md ("From your own code") run as written: the HTTP one against a served
hub, with a token, and the stdio one spawning the hub, which recalls what the first one saved."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOKEN = "sdk-example-token-0123456789abcdef"


def examples() -> dict[str, str]:
    page = (PROJECT / "docs" / "catalog.md").read_text()
    blocks = re.findall(r"```python\n(# [^\n]+)\n(.*?)```", page, re.S)
    return {title: f"{title}\n{body}" for title, body in blocks}


def run(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = cwd / "client.py"
    path.write_text(code)
    bin_dir = str(Path(sys.executable).parent)  # where `hermes-hub` is, as for a user who installed it
    return subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", **env})


async def test_the_documented_clients_run_over_http_and_stdio(tmp_path):
    code = examples()
    http, stdio = code["# a client of a served hub over streamable HTTP"], code["# the hub as a child process over stdio"]
    config = {"mcpServers": {}, "storage": {"url": "sqlite:///hub.db"},
              "auth": {"tokens": [{"token": TOKEN, "user": "me"}], "local_user": "me"}}
    async with serve_process(config, tmp_path) as served:
        refused = run(http, tmp_path, HERMES_URL=served.url)
        assert refused.returncode != 0 and "MCPError" in refused.stderr  # no token: the hub says no (a 401)
        done = run(http, tmp_path, HERMES_URL=served.url, HERMES_TOKEN=TOKEN)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert re.fullmatch(r"\d+ tools, among them hermes_\w+", first) and second == "memory added"

    recalled = run(stdio, tmp_path)  # hub.json in this folder: the same store, as the same person
    assert recalled.returncode == 0, recalled.stderr
    assert "I take my coffee black" in recalled.stdout.splitlines()
