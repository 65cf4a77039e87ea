"""What a new user meets first, tried as they would: no venv on PATH, a port already taken, a typo in a
tool's name, the example chat config. Real processes; every wait bounded."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_hub.app.cli import main
from tests.support import PROJECT, demo

pytestmark = pytest.mark.timeout(90)

HERMES_HUB = str(Path(sys.executable).parent / "hermes-hub")  # the console script, as a user runs it
NO_VENV_PATH = "/usr/bin:/bin"  # a login shell's PATH: no .venv/bin, so `python` is not the venv's


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(main, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def bare_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": NO_VENV_PATH, "HOME": os.environ["HOME"], "HERMES_DATA_DIR": str(tmp_path / "store"),
            "HERMES_DEMO_DATA": str(tmp_path / "demo")}


# -- the bundled servers, whatever PATH holds ----------------------------------------------------------------


@pytest.mark.slow
def test_the_bundled_hub_json_checks_ok_and_its_servers_get_ready_without_the_venv_on_path(tmp_path):
    import subprocess

    env = bare_env(tmp_path)
    check = subprocess.run([HERMES_HUB, "check", "hub.json"], cwd=PROJECT, env=env, capture_output=True, text=True,
                           timeout=60)
    servers = subprocess.run([HERMES_HUB, "servers"], cwd=PROJECT, env=env, capture_output=True, text=True,
                             timeout=60)

    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines()[-1] == "hub.json: OK, 3 of 3 servers enabled"
    assert servers.returncode == 0, servers.stdout + servers.stderr
    assert [line.split()[:2] for line in servers.stdout.splitlines()[1:4]] == [
        ["calendar", "READY"], ["reminders", "READY"], ["notes", "READY"]]


def test_a_pasted_python_server_still_runs_the_python_on_path(tmp_path):
    (tmp_path / "servers").mkdir()  # the user's own `servers` package beside their hub.json: theirs, not ours
    (tmp_path / "servers" / "calendar.py").write_text("")
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {
        "theirs": {"command": "python", "args": ["-m", "servers.calendar"], "cwd": "."},
        "fetch": {"command": "python", "args": ["-m", "mcp_server_fetch"]},
    }}))

    result = invoke("check", str(path), env={"PATH": str(tmp_path / "empty")})

    assert result.exit_code == 1
    assert result.stderr.splitlines()[:2] == [
        "error: mcpServers.theirs.command: command 'python' was not found on PATH; install it, or write its full path",
        "error: mcpServers.fetch.command: command 'python' was not found on PATH; install it, or write its full path",
    ]


# -- check starts each server ----------------------------------------------------------------------------


@pytest.mark.slow
def test_check_starts_every_server_at_once_and_names_one_that_exits_or_never_shakes_hands(tmp_path):
    quits = "import sys; print('ModuleNotFoundError: no module named mcp', file=sys.stderr); sys.exit(3)"
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {
        "notes": demo("notes", tmp_path),
        "quits": {"command": sys.executable, "args": ["-c", quits]},
        "mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout": 2},
        "mute2": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout": 2},
        "remote": {"url": "http://127.0.0.1:9/mcp"},  # not started: check starts stdio servers only
    }}))

    started = time.monotonic()
    result = invoke("check", str(path))
    took = time.monotonic() - started

    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: mcpServers.quits: exited during startup (exit 3); its last stderr line: ModuleNotFoundError: no "
        f"module named mcp; check mcpServers.quits.command and args in {path}",
        f"error: mcpServers.mute: did not complete the MCP handshake within 2s; check mcpServers.mute.command and "
        f"args in {path}",
        f"error: mcpServers.mute2: did not complete the MCP handshake within 2s; check mcpServers.mute2.command "
        f"and args in {path}",
        f"error: {path}: 3 enabled servers cannot start (see above)",
    ]
    assert took < 12  # concurrently: two 2 s timeouts (and stopping them) take one's time, not two


def test_check_no_start_checks_the_file_without_starting_anything(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {"quits": {"command": sys.executable, "args": ["-c", "exit(3)"]}}}))

    result = invoke("check", "--no-start", str(path))

    assert result.exit_code == 0 and result.stdout.endswith(f"{path}: OK, 1 of 1 servers enabled\n")


# -- a port already taken ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_serve_on_a_taken_port_says_so_in_one_line_naming_port_and_hub_port_and_exits_2(tmp_path):
    import socket
    import subprocess

    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "hermes_hub", "serve", "--config", str(path), "--port", str(port)],
                             cwd=PROJECT, capture_output=True, text=True, timeout=60)

    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == (f"error: port {port} on 127.0.0.1 is already in use (another `hermes-hub "
                                           f"serve`?); serve on another with --port {port + 1}, or set hub.port in "
                                           f"{path}")
    assert "Errno" not in run.stderr and "serving" not in run.stderr  # nothing claimed to serve first


@pytest.mark.slow
def test_make_serve_passes_port_to_the_hub(tmp_path):
    import socket
    import subprocess

    with socket.socket() as taken:  # a taken port: make's hub stops at once, saying which port it tried
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(["make", "serve", f"PORT={port}"], cwd=PROJECT, capture_output=True, text=True,
                             timeout=60, env={**os.environ, "HERMES_DATA_DIR": str(tmp_path)})

    assert f"serve --config hub.json --port {port}\n" in run.stdout
    assert f"error: port {port} on 127.0.0.1 is already in use" in run.stderr


# -- the example keeps its data beside itself ------------------------------------------------------------------


@pytest.mark.slow
def test_the_example_chat_keeps_its_store_and_demo_data_beside_itself_not_in_the_users(tmp_path):
    import subprocess

    example = PROJECT / "clients" / "example"
    users_store = tmp_path / "my-store"  # where the person's own hub keeps its data
    env = {k: v for k, v in os.environ.items() if k != "HERMES_DEMO_DATA"} | {"HERMES_DATA_DIR": str(users_store)}
    run = subprocess.run([HERMES_HUB, "chat", "--config", "clients/example/hub.json", "--once",
                          "book lunch with Ana on Monday"], cwd=PROJECT, env=env, capture_output=True, text=True,
                         timeout=90)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "Booked: lunch with Ana" in run.stdout
    assert not users_store.exists() or not any(users_store.iterdir())
    assert (example / ".data" / "hub.db").is_file() and (example / ".data" / "demo" / "calendar.json").is_file()
    assert subprocess.run(["git", "check-ignore", "-q", "clients/example/.data/hub.db"], cwd=PROJECT).returncode == 0
