"""Issue 16, item 5: a served hub's status tells each caller only what is theirs to know.

An admin-only server dies printing its database URL, password included, to stderr. Strangers (/readyz
without a token) learn whether the hub is ready and servers' states; bob, a user, sees the servers and
tools he may use and counts of his own data, never a server's stderr, exit code, pid or error text;
alice, an admin, still sees all of it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError

from hermes_hub.infra.errors import ASK_ADMIN
from tests.support import PROJECT, as_user, serve_process, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SECRET = "postgresql://app:s3cret@db/x"
BOB_TOKEN = "bob-static-token-0123456789abcdef"
ADMIN_ONLY = ("vault", "ledger")


def config() -> dict[str, Any]:
    dying = ("--stderr", f"fatal: cannot connect to {SECRET}", "--exit-after-start", "1")
    return {
        "mcpServers": {
            "toy": toy(),
            "vault": toy("--name", "vault", *dying, roles=["admin"]),  # admin-only, dead, its stderr a secret
            "ledger": toy("--name", "ledger", roles=["admin"]),  # admin-only and READY: its tools are named
            "flaky": toy("--name", "flaky", *dying),  # everyone's, dead: bob sees the state, not the why
        },
        "auth": {"tokens": [{"token": BOB_TOKEN, "user": "bob"}]},
    }


@pytest.fixture
async def hub(tmp_path):
    """The served hub, alice's admin token (made with `hermes-hub token create`) and bob's (hub.json)."""
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(config()))
    made = await anyio.run_process([sys.executable, "-m", "hermes_hub", "token", "create", "alice", "--role",
                                    "admin", "--config", str(path)], cwd=PROJECT, check=False)
    assert made.returncode == 0, made.stderr.decode()
    async with serve_process(config(), tmp_path) as served:
        yield served, made.stdout.decode().strip(), BOB_TOKEN


def base(served: Any) -> str:
    return served.url.removesuffix("/mcp")


async def status_json(served: Any, token: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.get(f"{base(served)}/status.json", headers={"Authorization": f"Bearer {token}"})


async def status_tool(served: Any, token: str) -> tuple[dict[str, Any], str]:
    """``hermes_hub_status`` and the resource ``hub://hermes/status``, as the token's user over MCP."""
    async with as_user(served.url, token) as client:
        result = await client.call_tool("hermes_hub_status", {})
        resource = await client.read_resource("hub://hermes/status")
    return result.structured_content, resource.contents[0].text


def assert_nothing_admin_only(text: str) -> None:
    assert SECRET not in text and "s3cret" not in text
    for word in ("stderr_tail", "exit_code", '"pid"', "hermes_hub_reload", "secret.key", "hub.db", *ADMIN_ONLY):
        assert word not in text, f"{word!r} leaked to a non-admin"


async def test_readyz_without_a_token_says_ready_and_states_but_no_error_text_and_no_restricted_names(hub):
    served, *_ = hub
    with anyio.fail_after(20):
        async with httpx2.AsyncClient(timeout=10) as http:
            ready = await http.get(f"{base(served)}/readyz")
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert body["ready"] is True
    assert {s["name"] for s in body["servers"]} == {"toy", "flaky"}
    assert all(set(s) == {"name", "state"} for s in body["servers"])
    assert sum(body["restricted"].values()) == 2  # vault and ledger, counted by state, never named
    assert_nothing_admin_only(ready.text)


async def test_a_user_sees_no_secret_stderr_exit_code_pid_or_admin_only_tool_in_status_json_page_or_tool(hub):
    served, _, bob = hub
    with anyio.fail_after(60):
        as_json = await status_json(served, bob)
        async with httpx2.AsyncClient(timeout=10) as http:
            page = await http.get(f"{base(served)}/status", headers={"Authorization": f"Bearer {bob}"})
        tool, resource = await status_tool(served, bob)
    assert as_json.status_code == 200 and page.status_code == 200
    for text in (as_json.text, page.text, json.dumps(tool), resource):
        assert_nothing_admin_only(text)
    for data in (as_json.json(), tool):
        assert {s["name"] for s in data["servers"]} == {"toy", "flaky"}
        flaky = next(s for s in data["servers"] if s["name"] == "flaky")
        assert flaky["state"] != "READY" and flaky["error"] == ASK_ADMIN  # the state, and whom to ask
        assert data["tool_tokens"]["tools"] and not any(
            name.startswith(("ledger_", "vault_")) for name in data["tool_tokens"]["tools"])
        assert set(data["tool_tokens"]["servers"]) == {"toy", "hermes"}
    assert "ask the hub&#39;s admin" in page.text  # the page says the same as status.json


async def test_a_user_counts_only_their_own_memories_while_an_admin_counts_everyones(hub):
    served, alice, bob = hub
    with anyio.fail_after(60):
        async with as_user(served.url, alice) as client:
            for text in ("My bank PIN is on the blue card", "I park on level 3"):
                await client.call_tool("hermes_memory_remember", {"text": text})
        async with as_user(served.url, bob) as client:
            await client.call_tool("hermes_memory_remember", {"text": "I like green tea"})
        bobs_json, alices_json = (await status_json(served, bob)).json(), (await status_json(served, alice)).json()
        bobs_tool, _ = await status_tool(served, bob)
    assert bobs_json["memory"]["memories"] == bobs_tool["memory"]["memories"] == {"active": 1}
    assert "pending" not in bobs_json["memory"]  # queue depths count everyone's rows
    assert alices_json["memory"]["memories"] == {"active": 3} and "pending" in alices_json["memory"]


async def test_a_user_calling_a_dead_server_learns_its_state_not_its_error_and_admin_only_names_do_not_exist(hub):
    served, _, bob = hub
    with anyio.fail_after(60):
        async with as_user(served.url, bob) as client:
            dead = await client.call_tool("flaky_echo", {"text": "hi"})
            with pytest.raises(MCPError) as hidden:
                await client.call_tool("vault_echo", {"text": "hi"})
    assert dead.is_error and "server 'flaky' is not ready" in dead.content[0].text
    assert ASK_ADMIN in dead.content[0].text and "s3cret" not in dead.content[0].text
    assert "unknown tool 'vault_echo'" in hidden.value.message and "s3cret" not in hidden.value.message


async def test_an_admin_still_sees_every_servers_error_stderr_exit_code_and_pid(hub):
    served, alice, _ = hub
    with anyio.fail_after(60):
        as_json = (await status_json(served, alice)).json()
        tool, _ = await status_tool(served, alice)
        async with as_user(served.url, alice) as client:
            dead = await client.call_tool("vault_echo", {"text": "hi"})
    for data in (as_json, tool):
        servers = {s["name"]: s for s in data["servers"]}
        assert set(servers) == {"toy", "vault", "ledger", "flaky"}
        vault = servers["vault"]
        assert any(SECRET in line for line in vault["stderr_tail"])
        assert {"pid", "exit_code", "last_exit_code"} <= set(vault) and vault["error"] != ASK_ADMIN
        assert "pid" in servers["toy"] and isinstance(servers["toy"]["pid"], int)
        assert "hermes_hub_reload" in data["tool_tokens"]["tools"]
        assert any(name.startswith("ledger_") for name in data["tool_tokens"]["tools"])
        folder = Path(data["data"]["folder"])  # where the store and the key live (issue 33 item 4)
        assert data["data"] == {"folder": str(folder), "store": f"{folder / 'hub.db'} (SQLite)",
                                "secret_key": str(folder / "secret.key")}
    async with httpx2.AsyncClient(timeout=10) as http:
        page = await http.get(f"{base(served)}/status", headers={"Authorization": f"Bearer {alice}"})
    assert f"data folder <code>{folder}</code> · store <code>{folder / 'hub.db'} (SQLite)</code>" in page.text
    assert dead.is_error and "server 'vault' is not ready" in dead.content[0].text
    assert ASK_ADMIN not in dead.content[0].text
