"""Background indexing survives a crash: a hub killed with -9 mid-way resumes where it stopped after a
restart, and every message ends up indexed exactly once (terms and vector)."""

from __future__ import annotations

import os
import signal

import anyio
import pytest
from mcp import Client

from hermes_hub.infra.storage import open_store
from tests.support import serve_process, until

pytestmark = pytest.mark.anyio
MESSAGES = 400


async def pending(host: Client) -> dict[str, int]:
    status = (await host.call_tool("hermes_hub_status", {})).structured_content
    return status["memory"]["pending"]


@pytest.mark.slow
async def test_indexing_killed_mid_way_resumes_after_a_restart_and_indexes_each_message_once(tmp_path):
    db = tmp_path / "hub.db"
    config = {"mcpServers": {}, "storage": {"url": f"sqlite:///{db}"}}
    async with serve_process(config, tmp_path) as served:
        async with Client(served.url) as host:
            s = (await host.call_tool("hermes_session_create", {"title": "long"})).structured_content
            for i in range(MESSAGES):
                await host.call_tool("hermes_session_append", {
                    "session_id": s["session_id"], "role": "user",
                    "content": f"note {i}: the {('red', 'green', 'blue')[i % 3]} folder holds invoice {i * 7}"})
            async def started() -> list[int] | None:  # indexing has begun (then pull the plug); how much is left
                left = (await pending(host))["messages_vectors"]
                return [left] if left < MESSAGES else None

            [left] = await until(started, timeout=120)
        assert left > 0, "indexing finished before the kill; the test needs more messages"
        os.kill(served.proc.pid, signal.SIGKILL)
        served.proc.wait(10)
    async with serve_process(config, tmp_path) as served, Client(served.url) as host:
        async def indexed() -> bool:
            return not any((await pending(host)).values())

        await until(indexed, timeout=300, every=0.1)
        found = (await host.call_tool("hermes_memory_recall", {"query": "which folder holds invoice 2793?",
                                                               "sources": ["sessions"], "limit": 3}))
    async with open_store(f"sqlite:///{db}") as store:
        [table] = [n for (n,) in await store.raw("SELECT name FROM vector_tables WHERE source = 'messages'")]
        counts = await store.raw(f"SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM message_terms), "
                                 f"(SELECT COUNT(*) FROM {table}), (SELECT COUNT(DISTINCT rowid) FROM {table})")
    assert counts == [(MESSAGES, MESSAGES, MESSAGES, MESSAGES)]
    assert found.structured_content["items"][0]["text"] == "note 399: the red folder holds invoice 2793"


async def test_a_message_written_after_the_newest_one_was_deleted_is_still_indexed(tmp_path):
    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}})
    async with Hub(config) as hub, hub.client() as host:
        keep = (await host.call_tool("hermes_session_create", {"title": "keep"})).structured_content["session_id"]
        drop = (await host.call_tool("hermes_session_create", {"title": "drop"})).structured_content["session_id"]
        await host.call_tool("hermes_session_append", {"session_id": keep, "role": "user", "content": "first note"})
        await host.call_tool("hermes_session_append", {"session_id": drop, "role": "user", "content": "a secret plan"})
        with anyio.fail_after(120):
            await hub.memories.indexer.drain()
        await host.call_tool("hermes_session_delete", {"session_id": drop})  # the newest message goes
        await host.call_tool("hermes_session_append", {"session_id": keep, "role": "user",
                                                       "content": "the violin lesson moved to Thursday"})
        with anyio.fail_after(120):
            await hub.memories.indexer.drain()
        found = await host.call_tool("hermes_memory_recall", {"query": "when is the violin lesson?",
                                                              "sources": ["sessions"], "limit": 1})
        pks = await hub.store.raw("SELECT pk FROM messages ORDER BY pk")
    assert found.structured_content["items"][0]["text"] == "the violin lesson moved to Thursday"
    assert [pk for (pk,) in pks] == [1, 3]  # the deleted message's key is not given out again
