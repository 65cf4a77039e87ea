"""``${secret:NAME}`` references: only on per_user servers, filled from one user's secrets, and set with
``hermes-hub secret`` from a prompt or stdin, never the command line."""

from __future__ import annotations

import json
import sys

import anyio
import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from tests.support import PROJECT


def server(**extra):
    return {"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${secret:github}"}, **extra}}}


def test_a_secret_reference_on_a_shared_server_is_a_config_error_saying_to_add_per_user():
    with pytest.raises(ConfigError) as err:
        parse_config(server(), env={})
    assert ("env.GITHUB_TOKEN refers to ${secret:github}, a user's own secret: add \"per_user\": true to this "
            "server") in str(err.value) and "mcpServers.gh" in str(err.value)


def test_a_secret_reference_must_name_a_secret():
    with pytest.raises(ConfigError) as err:
        parse_config(server(per_user=True, env={"T": "${secret:no good}"}), env={})
    assert "env.T: ${secret:no good} is no secret name" in str(err.value)


def test_a_users_secrets_fill_env_and_headers_and_a_missing_one_leaves_its_header_out():
    cfg = parse_config({"mcpServers": {"api": {"url": "http://x/mcp", "per_user": True,
                                               "headers": {"Authorization": "Bearer ${secret:api}", "X-Team": "a"}}}},
                       env={}).mcp_servers["api"]
    assert cfg.secret_names == ["api"] and cfg.idle_stop == 600 and cfg.max_children == 20
    assert cfg.with_secrets({"api": "t0k"}).headers == {"Authorization": "Bearer t0k", "X-Team": "a"}
    assert cfg.with_secrets({}).headers == {"X-Team": "a"}
    assert cfg.headers["Authorization"] == "Bearer ${secret:api}"  # the entry itself keeps the reference


@pytest.mark.anyio
@pytest.mark.slow
async def test_secret_set_takes_no_value_on_the_command_line_and_refuses_an_empty_one(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path / 'hub.db'}"}}))

    async def run(*args, stdin=b""):
        done = await anyio.run_process([sys.executable, "-m", "hermes_hub", "secret", *args, "--config", str(path)],
                                       cwd=PROJECT, check=False, input=stdin)
        return done.returncode, done.stdout.decode() + done.stderr.decode()

    code, said = await run("set", "acct", "s3cret-value")
    assert code == 2 and "unexpected extra argument" in said.lower()
    code, said = await run("set", "acct", "--user", "ana")
    assert code == 1 and "no value given for secret 'acct'" in said
    code, said = await run("set", "acct", "--user", "ana", stdin=b"s3cret-value\n")
    assert code == 0 and "note: no server in" in said and "s3cret-value" not in said
    code, said = await run("list", "--user", "ana")
    assert code == 0 and "acct" in said and "s3cret-value" not in said
    assert (await run("delete", "acct", "--user", "ana"))[0] == 0
    code, said = await run("delete", "acct", "--user", "ana")
    assert code == 1 and "user 'ana' has no secret 'acct'" in said
