"""One bad entry doesn't sink hub.json (issue 33 item 5): a server whose ``${VAR}`` is unset is held back in a
config error that names the variable while the hub serves the others; `check` says which key to fix; a
sign-in to a server that cannot be reached says why, not which task group carried the error."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.app.cli import main
from tests.support import PROJECT, demo, free_port, serve_process

pytestmark = pytest.mark.anyio
UNSET = "HERMES_TEST_NEVER_SET_TOKEN"
HELD = (f"not started, a config error: mcpServers.github.env.GITHUB_TOKEN: environment variable {UNSET} is not set; "
        f"export it or write ${{{UNSET}:-default}}")


def config(tmp_path):
    return {"mcpServers": {
        "notes": demo("notes", tmp_path / "data"),
        "github": {"command": sys.executable, "args": ["-c", "raise SystemExit('never started')"],
                   "env": {"GITHUB_TOKEN": f"${{{UNSET}}}"}}}}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args], capture_output=True, text=True, timeout=60,
                          cwd=PROJECT)


@pytest.mark.slow
async def test_a_server_with_an_unset_variable_is_held_back_and_the_others_serve(tmp_path, monkeypatch):
    monkeypatch.delenv(UNSET, raising=False)
    async with serve_process(config(tmp_path), tmp_path) as served:
        async with httpx2.AsyncClient() as http, Client(streamable_http_client(served.url, http_client=http)) as host:
            names = {t.name for t in (await host.list_tools()).tools}
            assert {"notes_create_note", "notes_search_notes"} <= names and not any(n.startswith("github") for n in names)
            listed = await host.call_tool("notes_search_notes", {"query": "milk"})
            assert not listed.is_error

        shown = cli("servers", "--url", served.url)
        assert shown.returncode == 3, shown.stderr  # an enabled server is not READY
        lines = shown.stdout.splitlines()
        assert [line.split()[:2] for line in lines[1:3]] == [["notes", "READY"], ["github", "FAILED"]]
        assert f"github FAILED: {HELD}" in shown.stdout + shown.stderr

        status = json.loads(cli("servers", "--url", served.url, "--json").stdout)
        github = next(s for s in status["servers"] if s["name"] == "github")
        assert github["state"] == "FAILED" and github["error"].startswith(HELD) and github["restarts"] == 0

    log = served.log.read_text()
    assert log.count("mcpServers.github: held back, the other servers start") == 1
    assert "never started" not in log  # it was never run


def test_check_names_the_variable_and_exits_1_with_the_file_untouched(tmp_path, monkeypatch):
    monkeypatch.delenv(UNSET, raising=False)
    path = tmp_path / "hub.json"
    path.write_text(text := json.dumps(config(tmp_path), indent=2))
    result = CliRunner().invoke(main, ["check", str(path), "--no-start"])
    assert result.exit_code == 1
    assert result.stderr == (f"error: mcpServers.github.env.GITHUB_TOKEN: environment variable {UNSET} is not set; "
                             f"export it or write ${{{UNSET}:-default}}\n"
                             f"error: {path}: 1 enabled server cannot start (see above)\n")
    assert path.read_text() == text


def test_a_sign_in_to_a_server_that_cannot_be_reached_says_why(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {"crm": {"url": url, "auth": {"type": "oauth"}}}}))
    done = subprocess.run([sys.executable, "-m", "hermes_hub", "login", "crm", "--timeout", "5", "--config",
                           str(tmp_path / "hub.json")], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (f"error: cannot sign in to 'crm' at {url}: ConnectError: All connection attempts failed; "
                           f"check mcpServers.crm.url and that the server is up\n")
    assert "ExceptionGroup" not in done.stdout + done.stderr
