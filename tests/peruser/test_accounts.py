"""Whose credentials a call uses: a per_user server runs one connection per hub user, each with that
user's own ``${secret:NAME}``s, through a served hub over real HTTP (``hermes-hub serve``), with users'
secrets made by the real CLI and a real stdio (or uvicorn HTTP) server that says whose
account it acts for.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.fixtures.account_server import account_of
from tests.support import PROJECT, as_user, free_port, process, serve_process, until, wait_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRETS = {"ana": "ana-token-AAAA-1111-zzzz", "bob": "bob-token-BBBB-2222-yyyy", "cy": "cy-token-CCCC-3333-xxxx"}


def account_server(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "tests.fixtures.account_server"], "cwd": str(PROJECT),
            "env": {"ACCOUNT_TOKEN": "${secret:acct}"}, "per_user": True, **extra}


# the hub's users: static bearer tokens in hub.json (root is an admin)
TOKENS = {user: f"hub-token-of-{user}-0123456789" for user in ("ana", "bob", "cy", "dee", "root")}


def hub_config(tmp_path: Path, servers: dict[str, Any] | None = None, **server: Any) -> dict[str, Any]:
    return {"mcpServers": servers or {"acct": account_server(**server)},
            "storage": {"url": f"sqlite:///{tmp_path / 'hub.db'}"},
            "auth": {"tokens": [{"token": t, "user": u, "role": "admin" if u == "root" else "user"}
                                for u, t in TOKENS.items()]}}


async def cli(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args], cwd=PROJECT, check=False,
                                   input=None if stdin is None else stdin.encode())
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def set_secret(config: Path, user: str, value: str) -> str:
    code, out, err = await cli("secret", "set", "acct", "--user", user, "--config", str(config), stdin=value + "\n")
    assert code == 0, err
    assert value not in out + err
    return err


async def whoami(url: str, token: str) -> Any:
    async with as_user(url, token) as host:
        result = await host.call_tool("acct_whoami", {})
    text = result.content[0].text
    return json.loads(text) if not result.is_error else text


async def status_of(url: str, token: str) -> dict[str, Any]:
    async with as_user(url, token) as host:
        result = await host.call_tool("hermes_hub_status", {})
    return result.structured_content or json.loads(result.content[0].text)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
async def hub(tmp_path):
    """A served hub whose server 'acct' is per_user (at most two users at once); ana, bob and cy have set
    their secret 'acct' with the CLI, dee has not; root is an admin."""
    path = tmp_path / "hub.json"
    config = hub_config(tmp_path, max_children=2)
    path.write_text(json.dumps(config))
    for user, value in SECRETS.items():
        await set_secret(path, user, value)
    async with serve_process(config, tmp_path) as served:
        yield served, TOKENS


async def test_each_user_acts_through_their_own_account_in_their_own_child(hub):
    served, tokens = hub
    ana, bob = await whoami(served.url, tokens["ana"]), await whoami(served.url, tokens["bob"])
    assert ana["account"] == account_of(SECRETS["ana"]) and bob["account"] == account_of(SECRETS["bob"])
    assert ana["pid"] != bob["pid"] and alive(ana["pid"]) and alive(bob["pid"])
    assert (await whoami(served.url, tokens["ana"]))["pid"] == ana["pid"]  # ana's next call: her child again

    async with as_user(served.url, tokens["ana"]) as host:  # state inside the server is hers alone
        await host.call_tool("acct_note", {"text": "ana's plan"})
    async with as_user(served.url, tokens["bob"]) as host:
        assert (await host.call_tool("acct_notes", {})).content[0].text == "[]"


async def test_a_user_past_max_children_is_told_which_key_bounds_it(hub):
    served, tokens = hub
    await whoami(served.url, tokens["ana"])
    await whoami(served.url, tokens["bob"])
    refused = await whoami(served.url, tokens["cy"])
    assert refused == ("server 'acct': already runs 2 users' connections, the most mcpServers.acct.max_children "
                       "allows; try again once one has been unused for 600s (idle_stop), or ask the hub's admin to "
                       f"raise mcpServers.acct.max_children in {served.config}")


async def test_a_user_without_the_secret_is_told_to_connect_their_account_never_given_another(hub):
    served, tokens = hub
    await whoami(served.url, tokens["ana"])  # a connection with ana's account is running
    refused = await whoami(served.url, tokens["dee"])
    assert refused == ("server 'acct': connect your account: this server runs with each user's own credentials "
                       "and you have not set your secret 'acct'. Set it with `hermes-hub secret set acct` (or under "
                       "Your secrets on the hub's status page); your next call uses it")
    servers = (await status_of(served.url, tokens["dee"]))["servers"]
    assert servers[0]["per_user"] and servers[0]["account"].startswith("connect your account: `hermes-hub secret "
                                                                         "set acct`")


async def test_status_counts_connected_users_and_names_them_to_admins_only(hub):
    served, tokens = hub
    ana, bob = await whoami(served.url, tokens["ana"]), await whoami(served.url, tokens["bob"])
    mine = (await status_of(served.url, tokens["bob"]))["servers"][0]
    assert mine["users_connected"] == 2 and mine["account"] == "connected" and "accounts" not in mine
    assert "ana" not in json.dumps(await status_of(served.url, tokens["bob"]))
    admin = (await status_of(served.url, tokens["root"]))["servers"][0]
    assert {(a["user"], a["pid"]) for a in admin["accounts"]} == {("ana", ana["pid"]), ("bob", bob["pid"])}


async def test_secret_values_appear_in_no_log_audit_status_or_check(hub):
    served, tokens = hub
    for user in ("ana", "bob"):
        await whoami(served.url, tokens[user])
    shown = json.dumps(await status_of(served.url, tokens["root"]))
    base = served.url.removesuffix("/mcp")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['root']}"}) as http:
        shown += (await http.get(f"{base}/status.json")).text + (await http.get(f"{base}/status")).text
    audit = await cli("audit", "--json", "--config", str(served.config))
    check = await cli("check", str(served.config))
    listed = await cli("secret", "list", "--user", "ana", "--config", str(served.config))
    assert "acct" in listed[1] and audit[0] == 0 and "acct_whoami" in audit[1]
    everything = shown + served.log.read_text() + "".join(audit[1:] + check[1:] + listed[1:])
    leaked = [user for user, value in SECRETS.items() if value in everything]
    assert not leaked and (tmp := Path(str(served.config)).parent / "hub.db").exists()
    assert not any(value.encode() in tmp.read_bytes() for value in SECRETS.values())  # sealed in the store too


async def test_idle_stop_stops_a_users_child_and_a_secret_set_meanwhile_is_used_without_restart(tmp_path):
    path = tmp_path / "hub.json"
    config = hub_config(tmp_path, idle_stop=1, max_children=1)
    path.write_text(json.dumps(config))
    ana, bob = TOKENS["ana"], TOKENS["bob"]
    await set_secret(path, "ana", SECRETS["ana"])
    async with serve_process(config, tmp_path) as served:
        first = await whoami(served.url, ana)
        assert first["account"] == account_of(SECRETS["ana"])
        await until(lambda: not alive(first["pid"]), timeout=20)  # stopped after 1s unused
        assert "connect your account" in await whoami(served.url, bob)
        said = await set_secret(path, "bob", SECRETS["bob"])  # the CLI, beside the running hub
        assert "used by acct from the next start of bob's connection" in said
        assert (await whoami(served.url, bob))["account"] == account_of(SECRETS["bob"])


async def test_a_per_user_http_server_gets_each_users_token_in_its_headers(tmp_path):
    port = free_port()
    with process([sys.executable, "-m", "tests.fixtures.account_server", "--http", str(port)], tmp_path / "srv.log") as p:
        await wait_port(port, p, tmp_path / "srv.log")
        path = tmp_path / "hub.json"
        config = hub_config(tmp_path, {"acct": {"url": f"http://127.0.0.1:{port}/mcp", "per_user": True,
                                                "headers": {"Authorization": "Bearer ${secret:acct}"}}})
        path.write_text(json.dumps(config))
        ana, bob = TOKENS["ana"], TOKENS["bob"]
        for user in ("ana", "bob"):
            await set_secret(path, user, SECRETS[user])
        async with serve_process(config, tmp_path) as served:
            assert (await whoami(served.url, ana))["account"] == account_of(SECRETS["ana"])
            assert (await whoami(served.url, bob))["account"] == account_of(SECRETS["bob"])
            assert SECRETS["ana"] not in served.log.read_text()


async def test_a_user_sets_their_own_secret_on_the_status_page_and_the_next_call_uses_it(hub):
    served, tokens = hub
    base = served.url.removesuffix("/mcp")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['dee']}"}) as dee:
        page = (await dee.get(f"{base}/status")).text
        assert "Your secrets" in page and "Not set: <code>acct</code>" in page
        refused = await dee.post(f"{base}/status/secrets", data={"name": "bad name", "value": "x"})
        assert refused.status_code == 400 and "letters, digits" in refused.json()["error"]
        done = await dee.post(f"{base}/status/secrets", data={"name": "acct", "value": "dee-token-DDDD-4444"},
                              headers={"accept": "application/json"})
        assert done.json() == {"set": "acct", "user": "dee"}
        page = (await dee.get(f"{base}/status")).text
        assert "dee-token-DDDD-4444" not in page and "Not set: <code>acct</code>" not in page
    assert (await whoami(served.url, tokens["dee"]))["account"] == account_of("dee-token-DDDD-4444")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['root']}"}) as root:
        assert "Not set: <code>acct</code>" in (await root.get(f"{base}/status")).text  # root's own, not dee's
    async with httpx2.AsyncClient() as stranger:  # no login: nothing set; from another site's page: refused first
        assert (await stranger.post(f"{base}/status/secrets", data={"name": "acct", "value": "x"})).status_code == 401
        forged = await stranger.post(f"{base}/status/secrets", data={"name": "acct", "value": "x"},
                                     headers={"origin": "http://evil.example"})
        assert forged.status_code == 403


async def test_a_users_child_that_dies_is_restarted_alone_and_keeps_their_account(hub):
    served, tokens = hub
    ana, bob = await whoami(served.url, tokens["ana"]), await whoami(served.url, tokens["bob"])
    os.kill(ana["pid"], signal.SIGKILL)

    async def restarted() -> Any:
        found = await whoami(served.url, tokens["ana"])
        return isinstance(found, dict) and found["pid"] != ana["pid"] and found

    again = await until(restarted, timeout=30)
    assert again["account"] == account_of(SECRETS["ana"])
    assert await whoami(served.url, tokens["bob"]) == bob  # bob's child was never touched
