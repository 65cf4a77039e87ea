"""`memory`, `schedules`, `audit` and `traces` with --url and --token (issue 33 item 1): each goes through the
served hub's own tools as the token's user, who sees only their own; options that pick another user of the
local store are refused over --url; no token gets the sentence that says how to send one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support import PROJECT, as_user, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ANA, BOB = "ana-token-0123456789abcdef0123", "bob-token-0123456789abcdef0123"
FACT = "Ana's sister lives in Porto"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args], capture_output=True, text=True, timeout=120,
                          cwd=PROJECT, env={**os.environ, **(env or {})})


async def test_memory_audit_traces_and_schedules_answer_over_url_as_the_tokens_user(tmp_path):
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"}]}}
    async with serve_process(config, tmp_path) as served:
        url = served.url
        async with as_user(url, ANA) as ana:
            made = await ana.call_tool("hermes_memory_remember", {"text": FACT})
        memory_id = made.structured_content["memory_id"]

        listed = cli("memory", "list", "--url", url, "--token", ANA)
        assert listed.returncode == 0, listed.stderr
        assert memory_id in listed.stdout and FACT in listed.stdout
        assert json.loads(cli("memory", "list", "--url", url, "--token", BOB, "--json").stdout) == []

        recalled = cli("memory", "recall", "where does the sister live", "--url", url, env={"HERMES_TOKEN": ANA})
        assert recalled.returncode == 0 and FACT in recalled.stdout, recalled.stderr
        assert FACT not in cli("memory", "recall", "sister", "--url", url, "--token", BOB).stdout
        exported = cli("memory", "export", "--format", "json", "--url", url, "--token", ANA)
        assert FACT in exported.stdout

        other = cli("memory", "list", "--url", url, "--token", ANA, "--user", "bob")
        assert other.returncode == 2
        assert "--user reads the hub's store on this machine; over --url you are the token's user" in other.stderr

        theirs = cli("memory", "forget", memory_id, "--url", url, "--token", BOB)
        assert theirs.returncode == 1 and theirs.stderr.startswith("error: ") and memory_id in theirs.stderr
        assert memory_id in cli("memory", "list", "--url", url, "--token", ANA).stdout  # intact
        forgot = cli("memory", "forget", memory_id, "--url", url, "--token", ANA)
        assert forgot.returncode == 0 and forgot.stdout == f"forgot {memory_id}\n"
        assert json.loads(cli("memory", "list", "--url", url, "--token", ANA, "--json").stdout) == []

        audit = cli("audit", "--url", url, "--token", ANA, "--json", "--since", "1h")
        assert audit.returncode == 0, audit.stderr
        rows = json.loads(audit.stdout)
        assert {r["user_id"] for r in rows} == {"ana"}
        assert {"hermes_memory_remember", "hermes_memory_forget"} <= {r["tool"] for r in rows}
        assert "ana" not in {r["user_id"] for r in json.loads(cli("audit", "--url", url, "--token", BOB,
                                                                  "--json").stdout)}

        traces = cli("traces", "--url", url, "--token", ANA)
        assert traces.returncode == 0 and traces.stdout.split()[:3] == ["RUN", "STARTED", "PROFILE"], traces.stderr
        missing = cli("traces", "run-nope", "--url", url, "--token", ANA)
        assert missing.returncode == 1 and "run-nope" in missing.stderr

        schedules = cli("schedules", "--url", url, "--token", ANA)
        assert schedules.returncode == 0, schedules.stderr
        assert schedules.stdout == "no schedules for you; the agent makes them with hermes_schedule_create\n"
        paused = cli("schedules", "--url", url, "--token", ANA, "pause", "sch-nope")
        assert paused.returncode == 1 and "sch-nope" in paused.stderr

        anonymous = cli("memory", "list", "--url", url)
        assert anonymous.returncode == 1
        assert "this hub needs a token: pass --token or set HERMES_TOKEN" in anonymous.stderr


async def test_token_create_list_and_revoke_over_url_need_an_admins_token_and_the_new_token_works(tmp_path):
    root = "root-token-0123456789abcdef0123"
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": root, "user": "root", "role": "admin"},
                                                    {"token": ANA, "user": "ana"}]}}
    async with serve_process(config, tmp_path) as served:
        url = served.url
        made = cli("token", "create", "bob", "--name", "bob's laptop", "--url", url, "--token", root)
        assert made.returncode == 0, made.stderr
        secret = made.stdout.strip()
        assert f"a host sends it as the header   Authorization: Bearer {secret}" in made.stderr
        assert f"export HERMES_TOKEN={secret}" in made.stderr and "first token" not in made.stderr
        async with as_user(url, secret) as bob:  # the new token is bob's on the serving hub at once
            assert not (await bob.call_tool("hermes_memory_remember", {"text": "Bob likes tea"})).is_error

        rows = json.loads(cli("token", "list", "--json", "--url", url, "--token", root).stdout)
        [bobs] = [r for r in rows if r["user"] == "bob"]
        assert (bobs["name"], bobs["role"], bobs["revoked_at"]) == ("bob's laptop", "user", None)
        assert secret not in json.dumps(rows)

        refused = cli("token", "list", "--url", url, "--token", ANA)  # a user's token may not manage tokens
        assert refused.returncode == 1 and "admin" in refused.stderr and "Traceback" not in refused.stderr
        wrong = cli("token", "revoke", "tok_nope", "--url", url, "--token", root)
        assert wrong.returncode == 1 and "no live token with id 'tok_nope'" in wrong.stderr

        revoked = cli("token", "revoke", bobs["id"], "--url", url, "--token", root)
        assert revoked.returncode == 0 and revoked.stdout == f"revoked {bobs['id']}\n", revoked.stderr
        gone = cli("memory", "list", "--url", url, "--token", secret)
        assert gone.returncode == 1 and "refused the token (401)" in gone.stderr
