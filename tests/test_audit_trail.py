"""The hub audits every call in the background and loses none of it when it stops."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.storage import open_store
from tests.support import toy

pytestmark = pytest.mark.anyio


async def test_every_call_is_on_record_after_the_hub_stops(tmp_path):
    config = parse_config({"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}})
    async with Hub(config) as hub, hub.client() as host:
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


async def test_rows_the_store_refuses_stay_queued_and_are_written_once_when_it_takes_them_again(tmp_path, caplog):
    import sqlite3

    db = tmp_path / "hub.db"
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{db}"}})
    async with Hub(config) as hub, hub.client() as host:
        other = sqlite3.connect(db, isolation_level=None)  # another process's view of the same file
        other.execute("CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        for i in range(5):
            await host.call_tool("hermes_session_list", {})
        with anyio.fail_after(10):
            assert not await hub.audit_writer.flush()  # refused: the rows stay queued
        assert hub.audit_writer.pending == 5 and hub.audit_writer.dropped == 0
        await host.call_tool("hermes_hub_status", {})  # a newer row queues behind them
        other.execute("DROP TRIGGER refuse")
        other.close()
        with anyio.fail_after(10):
            assert await hub.audit_writer.flush()
        assert hub.audit_writer.pending == 0
    async with open_store(f"sqlite:///{db}") as store:
        rows = await store.query_audit(limit=100)
    assert [r.tool for r in reversed(rows)] == ["hermes_session_list"] * 5 + ["hermes_hub_status"]
    assert "could not write 5 audit rows (IntegrityError: disk says no); kept for the next try" in caplog.text


async def test_rows_still_refused_when_the_hub_stops_are_counted_and_logged_as_lost(tmp_path, caplog):
    import sqlite3

    db = tmp_path / "hub.db"
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{db}"}})
    async with Hub(config) as hub, hub.client() as host:
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        await host.call_tool("hermes_session_list", {})
        await host.call_tool("hermes_session_list", {})
    other.close()
    assert hub.audit_writer.dropped == 2
    assert "dropped 2 audit rows: the hub stopped while the store refused them" in caplog.text
