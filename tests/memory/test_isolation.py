"""Two users with real tokens against a served hub: memory never crosses between them, vectors
included, and another user's memory id answers exactly like one that never existed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support import as_user, served_hub, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ANA, BOB, ROOT = "ana-static-token-0123456789", "bob-static-token-0123456789", "root-static-token-0123456789"


async def answer(client: Client, tool: str, args: dict[str, Any] | None = None) -> Any:
    r = await client.call_tool(tool, args or {})
    return ("error", r.content[0].text) if r.is_error else r.structured_content


async def test_memories_and_their_ids_never_cross_users(tmp_path):
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"},
                                                    {"token": ROOT, "user": "root", "role": "admin"}]}}
    async with served_hub(config, tmp_path) as url, as_user(url, ANA) as ana, as_user(url, BOB) as bob, \
            as_user(url, ROOT) as root:
        with anyio.fail_after(120):
            mine = await answer(ana, "hermes_memory_remember", {"text": "My passport number ends in 4471"})
            await answer(bob, "hermes_memory_remember", {"text": "I collect vintage cameras"})
            # The queues count everyone's rows, so only an admin sees them: wait until both are indexed.
            async def indexed() -> bool:  # a served hub: its status is all there is to watch
                return not any((await answer(root, "hermes_hub_status"))["memory"]["pending"].values())

            await until(indexed, timeout=None)  # bounded above
            ghost = "mem_doesnotexist00"
            seen = {}
            for label, mid in (("ana's", mine["memory_id"]), ("ghost", ghost)):
                seen[label] = [
                    await answer(bob, "hermes_memory_history", {"memory_id": mid}),
                    await answer(bob, "hermes_memory_forget", {"memory_id": mid}),
                    await answer(bob, "hermes_memory_restore", {"memory_id": mid}),
                    await answer(bob, "hermes_memory_remember", {"text": "x", "supersedes": mid}),
                ]
            recalled = await answer(bob, "hermes_memory_recall", {"query": "passport number ending 4471"})
            listed = await answer(bob, "hermes_memory_list")
            exported = (await bob.call_tool("hermes_memory_export", {"format": "json"})).content[0].text
            resource = (await bob.read_resource("hub://hermes/memory")).contents[0].text
            try:
                await bob.read_resource(f"hub://hermes/memory/{mine['memory_id']}")
                read_other = "read"
            except Exception as e:  # noqa: BLE001 - the refusal's text is what matters
                read_other = str(e)
            still = await answer(ana, "hermes_memory_list")
    assert [m["text"] for m in still["memories"]] == ["My passport number ends in 4471"]
    for own, other in zip(seen["ana's"], seen["ghost"], strict=True):
        assert own == ("error", other[1].replace("mem_doesnotexist00", mine["memory_id"]))
    assert all("not found" in r[1] for r in seen["ghost"])
    assert all("4471" not in i["text"] for i in recalled["items"])
    assert [m["text"] for m in listed["memories"]] == ["I collect vintage cameras"]
    assert "4471" not in exported and "4471" not in resource
    assert "not found" in read_other and "4471" not in read_other
