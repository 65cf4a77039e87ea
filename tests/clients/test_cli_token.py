"""The debugging commands against a served hub that has tokens, as a person runs them: `hermes-hub tools
--url URL` with `--token`, with `HERMES_TOKEN` (and `HERMES_URL`), without a token, and with a wrong one;
and `token create` saying how to use what it made. Real `hermes-hub` processes against a real served hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.support import serve_process, toy

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

HUB_CLI = str(Path(sys.executable).parent / "hermes-hub")
TOKEN = "s3cret-cli-token-4f9a"


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`hermes-hub ARGS` as a process, with HERMES_URL/HERMES_TOKEN only as given here."""
    base = {k: v for k, v in os.environ.items() if k not in ("HERMES_URL", "HERMES_TOKEN")}
    return subprocess.run([HUB_CLI, *args], capture_output=True, text=True, timeout=60, env={**base, **env})


async def in_thread(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    with anyio.fail_after(70):
        return await anyio.to_thread.run_sync(lambda: cli(*args, **env))


def config() -> dict[str, object]:
    return {"mcpServers": {"toy": toy()}, "auth": {"tokens": [{"token": TOKEN, "user": "ana"}]}}


@pytest.mark.slow
async def test_tools_over_url_sends_the_token_from_the_flag_or_the_environment_and_a_401_says_what_to_do(tmp_path):
    async with serve_process(config(), tmp_path) as served:
        flag = await in_thread("tools", "--url", served.url, "--token", TOKEN)
        env = await in_thread("tools", **{"HERMES_URL": served.url, "HERMES_TOKEN": TOKEN})
        none = await in_thread("tools", "--url", served.url)
        wrong = await in_thread("tools", "--url", served.url, "--token", "not-the-token-77")
        wrong_env = await in_thread("servers", "--url", served.url, HERMES_TOKEN="not-the-token-88")
        still = await in_thread("call", "toy_echo", "--args", '{"text": "hi"}', "--url", served.url,
                                HERMES_TOKEN=TOKEN)
    for listed in (flag, env):
        assert listed.returncode == 0, listed.stderr
        assert "toy_echo" in listed.stdout
    assert none.returncode == 1
    assert none.stderr.startswith(f"error: {served.url} answered 401: this hub needs a token: pass --token or set "
                                  f"HERMES_TOKEN")
    assert "is the hub running" not in none.stderr and "Traceback" not in none.stderr
    for refused, secret in ((wrong, "not-the-token-77"), (wrong_env, "not-the-token-88")):
        assert refused.returncode == 1
        assert refused.stderr.startswith(f"error: {served.url} refused the token (401)"), refused.stderr
        assert secret not in refused.stderr + refused.stdout
        assert "Traceback" not in refused.stderr
    assert still.returncode == 0, still.stderr  # what held still holds: the right token still works
    assert "hi" in still.stdout
    assert TOKEN not in (served.log.read_text() + flag.stderr + env.stderr)


@pytest.mark.slow
async def test_token_create_prints_the_header_for_hosts_and_the_variable_for_the_cli_which_then_works(tmp_path):
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {"toy": toy()}}))
    made = await in_thread("token", "create", "ana", "--config", str(tmp_path / "hub.json"))
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert made.stdout == secret + "\n"  # stdout stays the token alone, for TOKEN=$(hermes-hub token create …)
    assert f"Authorization: Bearer {secret}" in made.stderr
    assert f"export HERMES_TOKEN={secret}" in made.stderr
    async with serve_process({"mcpServers": {"toy": toy()}}, tmp_path) as served:  # the same store
        listed = await in_thread("tools", **{"HERMES_URL": served.url, "HERMES_TOKEN": secret})
        refused = await in_thread("tools", "--url", served.url)
    assert listed.returncode == 0, listed.stderr
    assert "toy_echo" in listed.stdout
    assert "this hub needs a token" in refused.stderr  # the token made above is what the hub now requires


def test_a_token_without_a_url_is_a_usage_error_and_hermes_token_alone_is_ignored_in_process(tmp_path):
    given = cli("tools", "--config", str(tmp_path / "none.json"), "--token", "abc")
    assert given.returncode == 2
    assert given.stderr == ("error: --token goes with --url (or HERMES_URL): a hub built in-process or a raw server "
                            "takes no token\n")
