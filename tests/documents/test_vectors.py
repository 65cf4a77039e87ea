"""The chunk vectors a recall searches follow the store: a document forgotten or added after a recall
loaded them (by this process or another replica) is gone from, or found by, the next recall."""

from __future__ import annotations

import anyio
import pytest

from hermes_hub.infra.config import MemorySection
from hermes_hub.services.memory.documents import Documents
from hermes_hub.services.memory.embedders import make_embedder
from hermes_hub.infra.storage import open_store

pytestmark = pytest.mark.anyio


async def test_recall_sees_documents_added_and_forgotten_after_it_loaded_the_vectors(tmp_path):
    embedder = make_embedder(MemorySection())
    if embedder is None:
        pytest.skip("no embedder installed here")
    url = f"sqlite:///{tmp_path}/hub.db"
    async with open_store(url) as store, Documents(store, embedder) as docs, Documents(store, embedder) as other:
        first = await docs.add("ana", text="The spare key hangs in the garden shed.")
        with anyio.fail_after(120):
            await docs.wait_idle()
        before = await docs.recall("ana", "where can I find the spare key?")
        await other.forget("ana", first["document_id"])  # another replica's Documents on the same store
        second = await other.add("ana", text="The car is parked on level three of the garage.")
        with anyio.fail_after(120):
            await other.wait_idle()
        after = await docs.recall("ana", "which level is the car parked on?")
        pks, _ = await docs.vectors.matrix("ana", embedder.name)
    assert [h.document_id for h in before] == [first["document_id"]]
    assert [h.document_id for h in after] == [second["document_id"]]
    assert len(pks) == 1  # the cached matrix holds the new chunk's vector, not the forgotten one's
