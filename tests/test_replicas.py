"""Two ``hermes-hub serve`` processes on one hub.json and one PostgreSQL database behave as one hub:
sessions, memories, tokens and the audit trail are shared; a handshake-era session, which lives in
the replica that opened it, is answered "unknown session, reconnect" by the other one."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from tests.postgres import new_database
from tests.support import PROJECT, Served, as_user, serve_process, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
HANDSHAKE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "replica-test", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@asynccontextmanager
async def two_replicas(pg_server: Any, tmp_path: Any, **sections: Any) -> AsyncIterator[tuple[Served, Served]]:
    config = {"mcpServers": {}, "storage": {"url": await new_database(pg_server)}, "memory": {"embedder": "none"},
              **sections}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with serve_process(config, tmp_path / "a") as a, serve_process(config, tmp_path / "b") as b:
        yield a, b


@pytest.fixture
async def replicas(pg_server, tmp_path) -> AsyncIterator[tuple[Served, Served]]:
    async with two_replicas(pg_server, tmp_path) as pair:
        yield pair


async def cli(served: Served, *args: str) -> tuple[str, str]:
    """``hermes-hub ARGS --config <the replicas' hub.json>``: (stdout, stderr)."""
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(served.config)],
                                   cwd=PROJECT, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode(), done.stderr.decode()


async def call(client: Any, tool: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def status_with(url: str, token: str | None) -> int:
    headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
    async with httpx2.AsyncClient(timeout=10) as http:
        return (await http.post(url, json=HANDSHAKE, headers=headers)).status_code



async def test_sessions_memories_tokens_and_audit_are_shared_by_two_replicas(pg_server, tmp_path):
    # Replicas that require tokens from the start (auth.required): one created on either works on both.
    async with two_replicas(pg_server, tmp_path, auth={"required": True}) as (a, b):
        await _shared_by_both(a, b)


async def _shared_by_both(a: Served, b: Served) -> None:
    with anyio.fail_after(90):
        assert [await status_with(r.url, None) for r in (a, b)] == [401, 401]
        token, created = await cli(a, "token", "create", "alice")
        token, token_id = token.strip(), created.split("created ")[1].split()[0]
        async with as_user(a.url, token) as via_a, as_user(b.url, token) as via_b:
            sid = (await call(via_a, "hermes_session_create", {"title": "trip"}))["session_id"]
            await call(via_a, "hermes_session_append", {"session_id": sid, "role": "user", "content": "Zürich 北京"})
            seen_by_b = await call(via_b, "hermes_session_history", {"session_id": sid})
            await call(via_b, "hermes_session_append", {"session_id": sid, "role": "assistant", "content": "noted"})
            seen_by_a = await call(via_a, "hermes_session_history", {"session_id": sid})
            await call(via_a, "hermes_memory_remember", {"text": "My bike is at the north station"})
            recalled = await call(via_b, "hermes_memory_recall", {"query": "where is my bike?",
                                                                  "sources": ["memories"]})

        async def audit_has_both() -> bool:
            rows = json.loads((await cli(b, "audit", "--json"))[0])
            return {"hermes_session_create", "hermes_memory_recall"} <= {r["tool"] for r in rows}

        await until(audit_has_both, timeout=None)  # bounded above
        await cli(b, "token", "revoke", token_id)

        async def revoked_everywhere() -> bool:
            return [await status_with(r.url, token) for r in (a, b)] == [401, 401]

        await until(revoked_everywhere, timeout=None)  # bounded above
    assert [m["content"] for m in seen_by_b["messages"]] == ["Zürich 北京"]
    assert [m["content"] for m in seen_by_a["messages"]] == ["Zürich 北京", "noted"]
    assert recalled["items"][0]["text"] == "My bike is at the north station"


async def test_a_handshake_session_on_the_wrong_replica_is_told_to_reconnect_at_once(replicas):
    a, b = replicas
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            opened = await http.post(a.url, json=HANDSHAKE, headers=ACCEPT)
            sid = opened.headers["mcp-session-id"]
            follow = {**ACCEPT, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            wrong = await http.post(b.url, json=listing, headers=follow)
            right = await http.post(a.url, json=listing, headers=follow)
    assert opened.status_code == 200 and right.status_code == 200
    assert wrong.status_code == 404
    message = wrong.json()["error"]["message"]
    assert f"unknown session '{sid}'" in message and "reconnect" in message and "session affinity" in message
