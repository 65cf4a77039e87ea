"""The hub audits every call in the background and loses none of it when it stops."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client, MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.storage import open_store
from tests.support import toy

pytestmark = pytest.mark.anyio


async def test_every_call_is_on_record_after_the_hub_stops(tmp_path):
    config = parse_config({"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}})
    async with Hub(config) as hub, Client(hub.server) as host:
        with anyio.fail_after(30):
            await hub.wait_settled(30)
        for i in range(20):
            await host.call_tool("toy_echo", {"text": str(i), "api_key": "sk-123456789"})
        await host.call_tool("toy_add", {"a": 1})
        with pytest.raises(MCPError):
            await host.call_tool("toy_nope", {})
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        rows = await store.query_audit(limit=100)
    outcomes = [(r.tool, r.outcome) for r in reversed(rows)]
    assert outcomes == [("toy_echo", "ok")] * 20 + [("toy_add", "tool_error"), ("toy_nope", "refused")]
    assert all(r.arguments["api_key"] == "***" for r in rows if r.tool == "toy_echo")
    assert {r.user_id for r in rows} == {hub.local.user_id}
