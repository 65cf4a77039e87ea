"""Two HTTP users with real tokens against a real hub: authentication, isolation, roles, audit."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from hermes_hub.services.identity import create_token
from hermes_hub.infra.storage import open_store
from tests.support import as_user, served_hub, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
BOB_TOKEN = "bob-static-token-0123456789"


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(tool, args or {})
    return result.structured_content if not result.is_error else result.content[0].text


@pytest.fixture
async def two_users(tmp_path):
    async with open_store() as store:
        alice, _ = await create_token(store, "alice", "user", "laptop")
        admin, _ = await create_token(store, "root", "admin")
    config = {
        "mcpServers": {
            "toy": toy(tool_roles={"big": ["admin"]}),
            "secret": toy("--name", "secret", roles=["admin"]),
        },
        "auth": {"tokens": [{"token": BOB_TOKEN, "user": "bob"}]},
    }
    async with served_hub(config, tmp_path) as url:
        yield url, alice, BOB_TOKEN, admin


async def test_missing_and_bad_tokens_get_401_with_www_authenticate(two_users):
    url, *_ = two_users
    async with httpx2.AsyncClient() as http:
        missing = await http.post(url, json={})
        bad = await http.post(url, json={}, headers={"Authorization": "Bearer nope"})
    assert missing.status_code == 401 and bad.status_code == 401
    assert missing.headers["www-authenticate"].startswith('Bearer realm="hermes-hub"')
    assert "missing bearer token" in missing.json()["error_description"]
    assert "invalid or revoked token" in bad.json()["error_description"]
    assert "hermes-hub token create USER" in bad.json()["error_description"]


async def test_each_user_sees_only_their_own_sessions_and_others_ids_answer_not_found(two_users):
    url, alice_token, bob_token, _ = two_users
    with anyio.fail_after(60):
        async with as_user(url, alice_token) as alice, as_user(url, bob_token) as bob:
            mine = await call(alice, "hermes_session_create", {"title": "Alice's trip"})
            sid = mine["session_id"]
            await call(alice, "hermes_session_append", {"session_id": sid, "role": "user",
                                                        "content": "we meet in Zürich 我们明天去北京开会"})
            ghost = "ses_doesnotexist0000000"
            answers = {}
            for who, sess in itertools.product(("bob",), (sid, ghost)):
                answers[(who, sess == sid)] = [
                    await call(bob, "hermes_session_history", {"session_id": sess}),
                    await call(bob, "hermes_session_append", {"session_id": sess, "role": "user", "content": "x"}),
                    await call(bob, "hermes_session_rename", {"session_id": sess, "title": "mine now"}),
                    await call(bob, "hermes_session_delete", {"session_id": sess}),
                ]
            bob_list = await call(bob, "hermes_session_list")
            bob_search = await call(bob, "hermes_session_search", {"query": "北京开会"})
            alice_search = await call(alice, "hermes_session_search", {"query": "北京开会"})
            with pytest.raises(MCPError) as read_other:
                await bob.read_resource(f"hub://hermes/sessions/{sid}")
            alice_history = await call(alice, "hermes_session_history", {"session_id": sid})
    # Another user's id and an id that never existed answer exactly the same.
    assert [a.replace(sid, "ID") for a in answers[("bob", True)]] == \
           [a.replace(ghost, "ID") for a in answers[("bob", False)]]
    assert all("not found" in a for a in answers[("bob", True)])
    assert bob_list["sessions"] == [] and bob_search["results"] == []
    assert [r["session_id"] for r in alice_search["results"]] == [sid]
    assert "not found" in read_other.value.message
    assert [m["content"] for m in alice_history["messages"]] == ["we meet in Zürich 我们明天去北京开会"]


async def test_roles_hide_servers_and_tools_and_admin_only_builtins(two_users):
    url, alice_token, _, admin_token = two_users
    with anyio.fail_after(60):
        async with as_user(url, alice_token) as alice, as_user(url, admin_token) as admin:
            user_tools = {t.name for t in (await alice.list_tools()).tools}
            admin_tools = {t.name for t in (await admin.list_tools()).tools}
            with pytest.raises(MCPError) as refused:
                await alice.call_tool("secret_echo", {"text": "hi"})
            allowed = await admin.call_tool("secret_echo", {"text": "hi"})
            with pytest.raises(MCPError) as alice_typo:  # "did you mean" offers only what the caller may use
                await alice.call_tool("secret_ech", {"text": "hi"})
            with pytest.raises(MCPError) as admin_typo:
                await admin.call_tool("secret_ech", {"text": "hi"})
            with pytest.raises(MCPError) as not_hers:  # an admin-only own tool, listed or not, is not hers
                await alice.call_tool("hermes_token_list", {})
            tokens = await admin.call_tool("hermes_token_list", {})
    assert "toy_echo" in user_tools and "toy_big" not in user_tools
    assert not any(t.startswith("secret_") for t in user_tools)
    assert "unknown tool 'hermes_token_list'" in not_hers.value.message and not tokens.is_error
    assert {"toy_big", "secret_echo"} <= admin_tools
    assert "unknown tool 'secret_echo'" in refused.value.message
    assert allowed.content[0].text == "hi"
    assert "secret_echo" not in alice_typo.value.message and "did you mean 'secret_echo'" in admin_typo.value.message


async def test_a_server_limited_to_a_role_hides_its_prompts_and_resources_from_others(two_users):
    url, alice_token, _, admin_token = two_users
    with anyio.fail_after(60):
        async with as_user(url, alice_token) as alice, as_user(url, admin_token) as admin:
            user_prompts = {p.name for p in (await alice.list_prompts()).prompts}
            user_templates = {t.uri_template for t in (await alice.list_resource_templates()).resource_templates}
            admin_prompts = {p.name for p in (await admin.list_prompts()).prompts}
            with pytest.raises(MCPError) as hidden_prompt:
                await alice.get_prompt("secret_greet", {"who": "x"})
            with pytest.raises(MCPError) as hidden_read:
                await alice.read_resource("toy://secret/item/1")
            read = await admin.read_resource("toy://secret/item/1")
    assert "toy_greet" in user_prompts and "secret_greet" not in user_prompts
    assert "toy://secret/item/{item_id}" not in user_templates and "secret_greet" in admin_prompts
    assert "unknown prompt 'secret_greet'" in hidden_prompt.value.message
    assert "unknown resource 'toy://secret/item/1'" in hidden_read.value.message
    assert read.contents[0].text == "item 1 of secret"


async def test_audit_records_every_call_and_only_admins_read_other_users_rows(two_users):
    url, alice_token, bob_token, admin_token = two_users
    with anyio.fail_after(60):
        async with as_user(url, alice_token) as alice, as_user(url, bob_token) as bob, \
                as_user(url, admin_token) as admin:
            await call(alice, "toy_echo", {"text": "my password is hunter2", "password": "hunter2"})
            await call(alice, "toy_add", {"a": "not a number"})
            await call(bob, "toy_echo", {"text": "bob was here"})
            alice_rows = (await call(alice, "hermes_audit_query"))["calls"]
            peek = await call(bob, "hermes_audit_query", {"user": "alice"})
            everyone = (await call(admin, "hermes_audit_query", {"tool": "toy_echo"}))["calls"]
    assert {r["user_id"] for r in alice_rows} == {"alice"}
    echo = next(r for r in alice_rows if r["tool"] == "toy_echo")
    assert echo["arguments"]["password"] != "hunter2" and echo["outcome"] == "ok" and echo["server"] == "toy"
    bad = next(r for r in alice_rows if r["tool"] == "toy_add")
    assert bad["outcome"] == "tool_error" and "Invalid arguments" in bad["error"]
    assert "only admins may read another user's audit" in peek
    assert {r["user_id"] for r in everyone} == {"alice", "bob"}


async def test_the_sixth_wrong_token_in_a_minute_gets_429_on_mcp_and_status_while_another_address_gets_in(two_users):
    url, alice, *_ = two_users
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=10) as http:
        missing = [(await http.post(url, json=init, headers=headers)).status_code for _ in range(6)]
        wrong = [(await http.post(url, json=init, headers={**headers, "Authorization": f"Bearer guess-{n}"})).status_code
                 for n in range(6)]
        right_here = await http.post(url, json=init, headers={**headers, "Authorization": f"Bearer {alice}"})
        status = await http.get(url.removesuffix("/mcp") + "/status.json", headers={"Authorization": f"Bearer {alice}"})
    # Loopback is 127.0.0.0/8: a client bound to 127.0.0.2 is another address to the hub.
    elsewhere = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
    async with httpx2.AsyncClient(timeout=10, transport=elsewhere) as http:
        there = await http.post(url, json=init, headers={**headers, "Authorization": f"Bearer {alice}"})
    assert missing == [401] * 6  # a host that has not sent a token yet is not guessing
    assert wrong == [401] * 5 + [429]
    assert right_here.status_code == 429 and 0 < int(right_here.headers["retry-after"]) <= 60
    assert "try again in" in right_here.json()["error_description"]
    assert status.status_code == 429  # one count for /mcp and the status page
    assert there.status_code == 200 and '"serverInfo"' in there.text
