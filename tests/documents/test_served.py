"""Documents through a served hub over HTTP, with real tokens: each user's documents stay theirs (list,
recall, resources, forget), an admin's shared document reaches everyone, and only an admin forgets it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support import as_user, served_hub

pytestmark = pytest.mark.anyio
ANA, BOB, ROOT = "ana-static-token-0123456789", "bob-static-token-0123456789", "root-static-token-0123456789"


async def answer(client: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
    r = await client.call_tool(tool, args or {})
    return ("error", r.content[0].text) if r.is_error else r.structured_content


async def test_documents_stay_with_their_user_and_shared_ones_reach_everyone(tmp_path):
    config = {"mcpServers": {}, "memory": {"embedder": "none"},
              "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"},
                                  {"token": ROOT, "user": "root", "role": "admin"}]}}
    async with served_hub(config, tmp_path) as url, as_user(url, ANA) as ana, as_user(url, BOB) as bob, \
            as_user(url, ROOT) as root:
        with anyio.fail_after(120):
            mine = await answer(ana, "hermes_docs_add", {"text": "# Health\n\nMy blood type is AB negative.",
                                                         "title": "medical"})
            refused = await answer(bob, "hermes_docs_add", {"text": "# Policy\n\nx", "shared": True})
            shared = await answer(root, "hermes_docs_add", {"text": "# Policy\n\nExpenses are filed by the 5th.",
                                                            "shared": True})
            bob_recall = await answer(bob, "hermes_memory_recall", {"query": "blood type AB expenses filed",
                                                                    "sources": ["documents"]})
            ana_recall = await answer(ana, "hermes_memory_recall", {"query": "blood type", "sources": ["documents"]})
            bob_list = await answer(bob, "hermes_docs_list")
            bob_forget = await answer(bob, "hermes_docs_forget", {"document_id": mine["document_id"]})
            bob_forget_shared = await answer(bob, "hermes_docs_forget", {"document_id": shared["document_id"]})
            try:
                await bob.read_resource(f"hub://hermes/documents/{mine['document_id']}")
                read_other = "read"
            except Exception as e:  # noqa: BLE001 - the refusal's text is what matters
                read_other = str(e)
            shared_text = (await bob.read_resource(f"hub://hermes/documents/{shared['document_id']}")).contents[0].text
            root_forget = await answer(root, "hermes_docs_forget", {"document_id": shared["document_id"]})
            ana_list = await answer(ana, "hermes_docs_list")
    assert "only an admin may add a shared document" in refused[1]
    assert [i["document_id"] for i in bob_recall["items"]] == [shared["document_id"]]
    assert ana_recall["items"][0]["document_id"] == mine["document_id"]
    assert ana_recall["items"][0]["heading_path"] == ["Health"]
    assert [d["document_id"] for d in bob_list["documents"]] == [shared["document_id"]]
    assert "not found" in bob_forget[1] and "only an admin may forget it" in bob_forget_shared[1]
    assert "not found" in read_other and "blood" not in read_other
    assert shared_text == "# Policy\n\nExpenses are filed by the 5th."
    assert root_forget == {"forgotten": shared["document_id"]}
    assert [d["document_id"] for d in ana_list["documents"]] == [mine["document_id"]]
