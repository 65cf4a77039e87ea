"""Lexical search on a real SQLite file finds a user's own matches even when other users' matches
crowd the best-ranked ones (the owner is checked on a window of the best first)."""

from __future__ import annotations

import pytest

from hermes_hub.services.memory import Memories
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.terms import match_query

pytestmark = pytest.mark.anyio


async def test_a_users_weaker_matches_are_found_when_other_users_matches_rank_above_them(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        memories = Memories(store, use_config_embedder=False)
        for i in range(60):  # short texts: BM25 ranks them above ana's longer ones
            await memories.remember("bob", f"violin lesson {i}", kind="note")
        mine = ["On Tuesdays after the long school day my daughter goes to her violin lesson downtown",
                "The old violin from my grandfather needs new strings and a careful cleaning soon"]
        for text in mine:
            await memories.remember("ana", text, kind="note")
        match = match_query("violin")
        assert match is not None
        ana = await store.lexical_search("memories", "ana", match, 10)
        bob = await store.lexical_search("memories", "bob", match, 10)
        texts = {m.text for m in (await store.memories_by_pk("ana", [r.pk for r in ana])).values()}
    assert texts == set(mine)
    assert len(bob) == 10 and not {r.pk for r in bob} & {r.pk for r in ana}
