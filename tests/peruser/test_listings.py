"""Issue 30, item 9: one user's listing of a per_user server is shown to nobody else. The server (the account
fixture) lists a tool named after its account (``send_to_acme_payroll___cfo_office`` for ana's CRM token);
through a served hub with ``hub.pin: auto``, ana sees and calls hers (and reads her resource, gets her
prompt), while bob (no secret, no connection) and
root (an admin) see only the listing of the credential-free probe, cannot reach ana's tool, and no pin stores
ana's account-specific name or description."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.peruser.test_accounts import TOKENS, set_secret
from tests.support import PROJECT, as_user, serve_process, tool_names, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ACME = "acme_payroll___cfo_office"
ANAS = f"{ACME}@ana-token-AAAA-1111-zzzz"  # her CRM token: the part before @ names her account
PROBED = {"crm_whoami", "crm_note", "crm_notes"}  # what the server lists without any credentials


def config(tmp_path: Path) -> dict[str, Any]:
    return {"mcpServers": {"crm": {"command": sys.executable, "args": ["-m", "tests.fixtures.account_server"],
                                   "cwd": str(PROJECT), "env": {"ACCOUNT_TOKEN": "${secret:acct}"},
                                   "per_user": True}},
            "hub": {"pin": "auto"}, "memory": {"embedder": "none"},
            "storage": {"url": f"sqlite:///{tmp_path / 'hub.db'}"},
            "auth": {"tokens": [{"token": t, "user": u, "role": "admin" if u == "root" else "user"}
                                for u, t in TOKENS.items()]}}


async def listing(url: str, user: str) -> dict[str, Any]:
    """What ``user``'s host is listed: tool names, and every list as JSON (to look for ana's account in)."""
    async with as_user(url, TOKENS[user]) as host:
        tools = await host.list_tools(cache_mode="refresh")
        everything = [tools, await host.list_resources(), await host.list_resource_templates(),
                      await host.list_prompts()]
        status = await host.call_tool("hermes_hub_status", {})
    dumped = json.dumps([r.model_dump(mode="json") for r in everything]) + json.dumps(status.model_dump(mode="json"))
    return {"names": {t.name for t in tools.tools}, "json": dumped}


async def call(url: str, user: str, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async with as_user(url, TOKENS[user]) as host:
        result = await host.call_tool(name, arguments)
    return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)


async def refused(url: str, user: str, uri: str, prompt: str) -> tuple[str, str]:
    """What ``user`` is told reading ``uri`` and getting ``prompt``."""
    said = []
    async with as_user(url, TOKENS[user]) as host:
        for attempt in (host.read_resource(uri), host.get_prompt(prompt, {})):
            with pytest.raises(MCPError) as err:
                await attempt
            said.append(err.value.message)
    return said[0], said[1]


def pins(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT * FROM tool_pins").fetchall()


async def test_a_users_own_listing_is_hers_alone_and_pins_hold_only_the_credential_free_one(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(config(tmp_path)))
    await set_secret(path, "ana", ANAS)
    async with serve_process(config(tmp_path), tmp_path) as served:
        assert PROBED <= (await listing(served.url, "bob"))["names"]  # the probe's listing, for everyone
        changes: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changes.append("tools")

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS['ana']}"}, timeout=30)
        async with http, Client(streamable_http_client(served.url, http_client=http), mode="legacy",
                                message_handler=on_message) as ana:
            started = await ana.call_tool("crm_whoami", {})  # her connection starts
            assert not started.is_error, started
            await until(lambda: changes, timeout=30)  # her host hears that her list changed, and lists it
            assert f"crm_send_to_{ACME}" in await tool_names(ana)
        sent = await call(served.url, "ana", f"crm_send_to_{ACME}", {"amount": "10"})
        async with as_user(served.url, TOKENS["ana"]) as host:  # her resource and prompt, routed by her listing
            [mine] = [r for r in (await host.list_resources()).resources if r.name == f"statement_{ACME}"]
            read = await host.read_resource(mine.uri)
            prompt = await host.get_prompt(f"crm_brief_{ACME}", {})
        bob_reads, bob_prompts = await refused(served.url, "bob", mine.uri, f"crm_brief_{ACME}")
        bob, root = await listing(served.url, "bob"), await listing(served.url, "root")
        bob_calls = await call(served.url, "bob", f"crm_send_to_{ACME}", {"amount": "10"})
        root_calls = await call(served.url, "root", f"crm_send_to_{ACME}", {"amount": "10"})
        ana_again = await listing(served.url, "ana")  # after others listed: still hers (no list kept across users)
        await until(lambda: {r[1] for r in pins(tmp_path / "hub.db") if r[0] == "crm"} >= {"whoami"}, timeout=30)
        pinned = pins(tmp_path / "hub.db")
    assert sent == (False, "sent 10 from acme_payroll___cfo_office")
    assert read.contents[0].text == f"the statement of {ACME}"
    assert prompt.messages[0].content.text == f"Brief me on {ACME}."
    assert "connect your account" in bob_reads  # his read goes to his own connection, which he has not made
    assert bob_prompts == f"unknown prompt 'crm_brief_{ACME}'; call prompts/list for the current names"
    assert f"crm_send_to_{ACME}" in ana_again["names"] and PROBED <= ana_again["names"]
    for seen in (bob, root):  # the listing of a connection made without credentials, never ana's
        assert PROBED <= seen["names"] and ACME not in seen["json"] and "acme" not in seen["json"].lower()
    assert bob_calls[0] and "connect your account" in bob_calls[1] and "acme" not in bob_calls[1]
    assert root_calls[0] and "connect your account" in root_calls[1]  # his own connection: needs his secret
    crm = sorted(r[1] for r in pinned if r[0] == "crm")
    assert crm == ["note", "notes", "whoami"]  # pinned: the probe's tools only
    assert "acme" not in json.dumps(pinned, default=str).lower()
