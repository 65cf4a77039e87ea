"""Provenance on SQLite and PostgreSQL: a memory names the messages it came from, recall returns them and
ranks a memory by them, history shows them, a session's own memories are forgotten on request (counted
first), and nothing of it crosses users or outlives what it links."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import InvalidInput
from tests.postgres import new_database

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["sqlite", "postgres"])
async def url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/hub.db"
    return await new_database(request.getfixturevalue("pg_server"))


async def ok(host: Client, tool: str, args: dict[str, Any]) -> Any:
    r = await host.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content


async def session(host: Client, title: str, *texts: str) -> tuple[str, list[str]]:
    made = await ok(host, "hermes_session_import", {"title": title, "messages": [
        {"role": "user", "content": t} for t in texts]})
    page = await ok(host, "hermes_session_history", {"session_id": made["session_id"]})
    return made["session_id"], [m["message_id"] for m in page["messages"]]


async def test_a_memory_is_found_by_its_source_messages_shows_them_and_goes_with_its_session(url):
    config = parse_config({"mcpServers": {}, "storage": {"url": url}, "memory": {"embedder": "none"}})
    async with Hub(config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            dog, (adopted, _) = await session(host, "pets", "I adopted a greyhound named Pixel last spring",
                                              "The weather was lovely")
            trip, (flew,) = await session(host, "trip", "We flew to Lisbon for the greyhound races")
            linked = await ok(host, "hermes_memory_remember", {"text": "Her name was picked by Ana",
                                                               "source_message_ids": [adopted]})
            both = await ok(host, "hermes_memory_remember", {"text": "Racing fan since the spring",
                                                             "source_message_ids": [adopted, flew]})
            await ok(host, "hermes_memory_remember", {"text": "Her name was picked by Bo"})  # no source
            await hub.memories.wait_idle()  # the messages' words are indexed in the background
            found = await ok(host, "hermes_memory_recall", {"query": "which greyhound did I adopt?",
                                                             "sources": ["memories"]})
            history = await ok(host, "hermes_memory_history", {"memory_id": linked["memory_id"]})
            unknown = await host.call_tool("hermes_memory_remember", {"text": "x", "source_message_ids": ["msg_no"]})
            with pytest.raises(InvalidInput, match="is not one of your messages"):  # another user's id
                await hub.memories.remember("bob", "stolen", source_message_ids=[adopted])
            asked = await ok(host, "hermes_memory_forget", {"session_id": dog})
            listed_before = await ok(host, "hermes_memory_list", {})
            done = await ok(host, "hermes_memory_forget", {"session_id": dog, "confirm": True})
            listed = await ok(host, "hermes_memory_list", {})
            await ok(host, "hermes_session_delete", {"session_id": trip})
            links = await hub.store.raw("SELECT count(*) FROM memory_sources")
            await ok(host, "hermes_memory_forget", {"all": True})
            left = await hub.store.raw("SELECT count(*) FROM memory_sources")
    items = found["items"]
    assert items[0]["memory_id"] == linked["memory_id"]  # its own words do not match; its source does
    assert {i["memory_id"] for i in items} == {linked["memory_id"], both["memory_id"]}  # not the unlinked one
    assert items[0]["provenance"]["session_id"] == dog and items[0]["provenance"]["message_ids"] == [adopted]
    assert items[0]["provenance"]["at"]
    assert history["source"]["message_ids"] == [adopted] and history["source"]["type"] == "explicit"
    assert unknown.is_error and "is not one of your messages" in unknown.content[0].text
    assert (asked["would_forget"], asked["memory_ids"]) == (1, [linked["memory_id"]])
    assert len(listed_before["memories"]) == 3  # counting forgets nothing
    assert done["forgotten"] == 1
    assert sorted(m["text"] for m in listed["memories"]) == ["Her name was picked by Bo", "Racing fan since the spring"]
    assert links == [(1,)]  # the trip's link went with its session; the pets' message still links
    assert left == [(0,)]  # forgetting every memory leaves no link behind
