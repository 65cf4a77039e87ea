"""`hermes-hub sessions list|search|show` (issue 33 item 7): a person's sessions from the terminal, built in-process
on the store or over --url as the token's user, who never sees another's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PROJECT, as_user, serve_process

pytestmark = pytest.mark.anyio
ANA, BOB = "ana-token-0123456789abcdef0123", "bob-token-0123456789abcdef0123"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args], capture_output=True, text=True, timeout=120,
                          cwd=PROJECT, env={**os.environ, **(env or {})})


async def fill(host) -> str:
    sid = (await host.call_tool("hermes_session_create", {"title": "Trip to Porto"})).structured_content["session_id"]
    for message in ({"role": "user", "content": "book a hotel in Porto for   two nights"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "hotels_search",
                                                                         "arguments": {"city": "Porto"}}]},
                    {"role": "tool", "content": '{"hotels": ["Casa Azul"]}', "tool_call_id": "c1"},
                    {"role": "assistant", "content": "Casa Azul has a room."}):
        await host.call_tool("hermes_session_append", {"session_id": sid, **message})
    return sid


@pytest.mark.slow
async def test_a_user_lists_searches_and_reads_their_own_sessions_over_url(tmp_path):
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"}]}}
    async with serve_process(config, tmp_path) as served:
        async with as_user(served.url, ANA) as ana:
            sid = await fill(ana)
        listed = cli("sessions", "list", "--url", served.url, "--token", ANA)
        assert listed.returncode == 0, listed.stderr
        head, row = listed.stdout.splitlines()
        assert head.split() == ["SESSION", "TITLE", "MESSAGES", "UPDATED"]
        assert row.startswith(sid) and "Trip to Porto" in row and row.split()[-2] == "4"

        found = cli("sessions", "search", "hotel", "--url", served.url, "--token", ANA)
        assert found.returncode == 0 and "book a hotel in Porto for two nights" in found.stdout

        shown = cli("sessions", "show", sid, "--url", served.url, env={"HERMES_TOKEN": ANA})
        lines = [line.split("] ", 1)[1] for line in shown.stdout.splitlines()]
        assert lines == ["user: book a hotel in Porto for   two nights",
                         'assistant calls hotels_search {"city": "Porto"} (id c1)',
                         'tool (result of c1): {"hotels": ["Casa Azul"]}',
                         "assistant: Casa Azul has a room."]

        theirs = cli("sessions", "show", sid, "--url", served.url, "--token", BOB)
        assert theirs.returncode == 1
        assert theirs.stderr == f"error: session '{sid}' not found; list your sessions to see their ids\n"
        assert cli("sessions", "list", "--url", served.url, "--token", BOB).stdout == "no sessions yet\n"
        anonymous = cli("sessions", "list", "--url", served.url)
        assert anonymous.returncode == 1 and "this hub needs a token: pass --token or set HERMES_TOKEN" in anonymous.stderr


async def test_in_process_the_local_user_reads_the_store_without_starting_a_server(tmp_path):

    from hermes_hub import Hub
    from hermes_hub.infra.config import load_config

    path = tmp_path / "hub.json"  # a server that cannot start: sessions must not wait for it
    path.write_text(json.dumps({"mcpServers": {"slow": {"command": "/nonexistent/server"}},
                                "storage": {"url": "sqlite:///hub.db"}, "auth": {"local_user": "ana"}}))
    async with Hub(load_config(path)) as hub, hub.client() as host:
        sid = await fill(host)
    shown = cli("sessions", "show", sid, "--config", str(path), "--json")
    assert shown.returncode == 0, shown.stderr
    assert [m["role"] for m in json.loads(shown.stdout)] == ["user", "assistant", "tool", "assistant"]
    assert "slow" not in shown.stderr
    assert Path(tmp_path / "hub.db").is_file()
