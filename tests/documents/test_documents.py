"""Documents through MCP clients on the real store (SQLite and PostgreSQL): add, recall with document,
heading path and position, list, read as a resource, forget totally; per user, with shared ones."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import InvalidInput, NotFound
from tests.postgres import new_database

pytestmark = pytest.mark.anyio

GUIDE = """# Hub guide

The hub is an MCP server and client at once.

## Storage

Sessions and memories live in one SQLite file by default. Several replicas share one PostgreSQL
database instead; set storage.url to its address.

## Backups

备份每天凌晨两点运行。恢复时使用 storage migrate 命令。
"""


async def call(host: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
    r = await host.call_tool(tool, args or {})
    return ("error", r.content[0].text) if r.is_error else r.structured_content


@pytest.fixture(params=["sqlite", "postgresql"])
async def hub(request, tmp_path):
    url = f"sqlite:///{tmp_path}/hub.db"
    if request.param == "postgresql":
        url = await new_database(request.getfixturevalue("pg_server"))
    async with Hub(parse_config({"mcpServers": {}, "storage": {"url": url}})) as h:
        yield h


async def test_a_document_is_recalled_by_words_and_meaning_with_where_each_hit_sits(hub):
    async with hub.client() as host:
        added = await call(host, "hermes_docs_add", {"text": GUIDE})
        words = await host.call_tool("hermes_memory_recall", {"query": "PostgreSQL replicas", "sources": ["documents"]})
        with anyio.fail_after(120):
            await hub.services.documents.wait_idle()
        meaning = await call(host, "hermes_memory_recall", {"query": "how do several copies of the hub share state?",
                                                            "sources": ["documents"], "limit": 2})
        chinese = await call(host, "hermes_memory_recall", {"query": "备份什么时候运行?", "sources": ["documents"]})
        both = await call(host, "hermes_memory_recall", {"query": "PostgreSQL", "sources": ["documents", "memories"]})
        listed = await call(host, "hermes_docs_list")
        text = (await host.read_resource(f"hub://hermes/documents/{added['document_id']}")).contents[0].text
    assert added["title"] == "Hub guide" and added["chunks"] == 3 and added["document_id"].startswith("doc_")
    first = words.structured_content["items"][0]
    assert first == {**first, "source": "document", "document_id": added["document_id"], "title": "Hub guide",
                     "heading_path": ["Hub guide", "Storage"], "position": 1}
    assert 'document "Hub guide" § Hub guide > Storage · chunk 1' in words.content[0].text.splitlines()[0]
    assert meaning["items"][0]["heading_path"] == ["Hub guide", "Storage"]
    assert chinese["items"][0]["heading_path"] == ["Hub guide", "Backups"]
    assert both["items"][0]["source"] == "document"
    assert [d["document_id"] for d in listed["documents"]] == [added["document_id"]] and text == GUIDE


async def test_forgetting_a_document_removes_it_from_every_index(hub):
    async with hub.client() as host:
        added = await call(host, "hermes_docs_add", {"text": GUIDE, "title": "Guide"})
        kept = await call(host, "hermes_docs_add", {"text": "Plain notes about PostgreSQL tuning.", "format": "text"})
        with anyio.fail_after(120):
            await hub.services.documents.wait_idle()
        gone = await call(host, "hermes_docs_forget", {"document_id": added["document_id"]})
        again = await call(host, "hermes_docs_forget", {"document_id": added["document_id"]})
        found = await call(host, "hermes_memory_recall", {"query": "PostgreSQL replicas share", "sources": ["documents"]})
        counts = await hub.services.documents.status(None)
        every = await call(host, "hermes_docs_forget", {"all": True})
        after = await call(host, "hermes_docs_list")
    assert gone == {"forgotten": added["document_id"]}
    assert again[0] == "error" and "not found" in again[1] and "hermes_docs_list" in again[1]
    assert {i["document_id"] for i in found["items"]} == {kept["document_id"]}
    assert counts == {"documents": 1, "chunks": 1, "unembedded": 0, "embedder_error": None}
    assert every == {"forgotten": 1} and after == {"documents": [], "next_cursor": None}


async def test_documents_are_per_user_and_shared_ones_are_read_by_everyone(hub):
    docs = hub.services.documents
    mine = await docs.add("ana", text="Ana's packing list: passport, charger, umbrella.")
    shared = await docs.add("root", text="Office wifi password rotates monthly.", shared=True, admin=True)
    with pytest.raises(InvalidInput, match="only an admin may add a shared document"):
        await docs.add("bob", text="x", shared=True)
    bob_sees = [d["document_id"] for d in (await docs.listing("bob"))["documents"]]
    bob_finds = await docs.recall("bob", "passport charger umbrella wifi")
    with pytest.raises(NotFound) as err:
        await docs.get("bob", mine["document_id"])
    with pytest.raises(NotFound) as ghost:
        await docs.get("bob", "doc_neverexisted0")
    with pytest.raises(InvalidInput, match="only an admin may forget it"):
        await docs.forget("bob", shared["document_id"])
    assert bob_sees == [shared["document_id"]] and {h.document_id for h in bob_finds} == {shared["document_id"]}
    assert str(err.value) == str(ghost.value).replace("doc_neverexisted0", mine["document_id"])
    await docs.forget("root", shared["document_id"], admin=True)
    assert (await docs.listing("bob"))["documents"] == []


async def test_bad_input_says_what_to_do_and_changes_nothing(hub):
    async with hub.client() as host:
        none = await call(host, "hermes_docs_add", {})
        two = await call(host, "hermes_docs_add", {"text": "a", "url": "https://example.com/"})
        path = await call(host, "hermes_docs_add", {"path": "/etc/passwd"})
        empty = await call(host, "hermes_docs_add", {"text": "   \n\n  "})
        listed = await call(host, "hermes_docs_list")
        only_docs = await call(host, "hermes_memory_recall", {"query": "anything", "sources": ["documents"]})
    assert "give exactly one of text" in none[1] and "got none" in none[1] and "got text, url" in two[1]
    assert "docs.roots" in path[1] and "holds no text" in empty[1]
    assert listed["documents"] == [] and only_docs == {"items": []}
