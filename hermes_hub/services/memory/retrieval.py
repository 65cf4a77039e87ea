"""Recall over documents in two stages: candidates by fusion, then a finer rescoring of the best few.

    hits = await retrieve(store, embedder, cache, "ana", "how do I share state between replicas?", limit=5)

Stage 1 ranks chunks twice, by BM25 over words and CJK bigrams (heading path and title weighted
below the text) and by the embedder's cosine similarity, and fuses the two lists by reciprocal rank.
Stage 2 rescores the best ``RERANK`` of them against the question itself: the share of the question's
content words (weighted by how rare they are among the candidates) that the chunk holds, the same for
its best two consecutive sentences (words close together) and for its heading path, and the chunk's
cosine similarity, each scaled over the candidates; the rest keep their fused order below them.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import anyio
import numpy as np

from hermes_hub.services.memory.chunking import sentences
from hermes_hub.services.memory.embedders import Embedder
from hermes_hub.infra.storage.documents import ChunkRow, DocumentStore
from hermes_hub.infra.storage.terms import content_terms, match_query, tokens

CANDIDATES = 40  # per ranked list
RRF_K = 60
RERANK = 12  # the best few of the fused list rescored against the question
MAX_EMBED_CHARS = 2000
CACHED_USERS = 64
THREAD_ROWS = 2000  # a larger matrix is multiplied off the event loop
# stage 2: similarity, words, words close together, heading path, stage-1 rank
WEIGHTS = (0.35, 0.25, 0.2, 0.1, 0.1)
COSINE_SPAN = 0.1  # e5 similarities of related passages lie within ~0.1: a closer spread is not a full point


@dataclass(frozen=True)
class Hit:
    pk: int
    chunk: ChunkRow
    score: float


class ChunkVectors:
    """The chunk vectors each user may read, as one matrix per user, reloaded when the store's
    (count, highest pk) of them moves (a document added, embedded or forgotten, by any replica)."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self._users: OrderedDict[str, tuple[tuple[int, int], np.ndarray, np.ndarray]] = OrderedDict()

    async def matrix(self, user_id: str, embedder: str) -> tuple[np.ndarray, np.ndarray]:
        """(pks, unit vectors as rows) of ``user_id``'s readable chunks."""
        key = f"{embedder}\0{user_id}"
        gen = await self.store.chunk_generation(user_id, embedder)
        cached = self._users.get(key)
        if cached is not None and cached[0] == gen:
            self._users.move_to_end(key)
            return cached[1], cached[2]
        pks, mat = None, None
        if cached is not None and gen[1] > cached[0][1]:  # only new rows, unless some also went
            new = await self.store.chunk_vectors(user_id, embedder, cached[0][1])
            if len(cached[1]) + len(new) == gen[0]:
                more_pks, more = _arrays(new)
                pks = np.concatenate([cached[1], more_pks])
                mat = np.vstack([cached[2], more]) if len(cached[1]) else more
        if pks is None or mat is None:
            pks, mat = _arrays(await self.store.chunk_vectors(user_id, embedder, 0))
        self._users[key] = (gen, pks, mat)
        self._users.move_to_end(key)
        while len(self._users) > CACHED_USERS:
            self._users.popitem(last=False)
        return pks, mat


def _arrays(rows: list[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    pks = np.array([pk for pk, _ in rows], dtype=np.int64)
    if not rows:
        return pks, np.zeros((0, 0), dtype=np.float32)
    return pks, np.stack([np.frombuffer(b, dtype=np.float32) for _, b in rows])


def pack(vector: list[float]) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


async def retrieve(store: DocumentStore, embedder: Embedder | None, cache: ChunkVectors, user_id: str,
                   question: str, limit: int, *, rerank: int = RERANK) -> list[Hit]:
    """The ``limit`` best chunks for ``question``; ``rerank`` 0 stops after stage 1 (for the benchmark)."""
    lists: dict[str, list[int]] = {}
    cosine: dict[int, float] = {}
    match = match_query(question)

    async def lexical() -> None:
        lists["lexical"] = [r.pk for r in await store.chunk_lexical(user_id, match or "", CANDIDATES)]

    async def vectors() -> None:
        assert embedder is not None
        [q] = await embedder.embed([question[:MAX_EMBED_CHARS]], query=True)
        pks, mat = await cache.matrix(user_id, embedder.name)
        if not len(pks):
            return
        qv = np.asarray(q, dtype=np.float32)
        # einsum, not BLAS: single-threaded, no hand-offs between cores (see bench/README.md, memory)
        product = functools.partial(np.einsum, "ij,j->i", mat, qv)
        sims = await anyio.to_thread.run_sync(product) if len(pks) > THREAD_ROWS else product()
        top = np.argsort(-sims)[:max(CANDIDATES, RERANK)]
        lists["vector"] = [int(pks[i]) for i in top[:CANDIDATES]]
        cosine.update({int(pks[i]): float(sims[i]) for i in top})

    async with anyio.create_task_group() as tg:
        if match:
            tg.start_soon(lexical)
        if embedder is not None:
            tg.start_soon(vectors)
    fused: dict[int, float] = {}
    for ranked in lists.values():
        for rank, pk in enumerate(ranked):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (RRF_K + rank + 1)
    order = sorted(fused, key=lambda pk: (-fused[pk], pk))[:max(limit, rerank, 20)]
    chunks = await store.chunks_by_pk(user_id, order)
    order = [pk for pk in order if pk in chunks]  # forgotten since it was indexed
    head = order[:rerank]
    fine = rescore(question, [chunks[pk] for pk in head], [fused[pk] for pk in head],
                   [cosine.get(pk) for pk in head], [chunks[pk] for pk in order])
    ranked = sorted(zip(head, fine, strict=True), key=lambda x: -x[1])
    # below the rescored few, the rest in fused order, each scored under the last rescored one
    floor, last = (min(fine), fused[head[-1]]) if head else (1.0, 1.0)
    rest = [(pk, floor * fused[pk] / last) for pk in order[rerank:]]
    return [Hit(pk, chunks[pk], round(score, 6)) for pk, score in [*ranked, *rest][:limit]]


def _stem(term: str) -> str:
    """Words cut to six letters ("configure", "configuration" -> "config"); CJK bigrams as they are."""
    return term[:6] if term.isascii() and len(term) > 6 else term


def _terms(text: str) -> set[str]:
    return {_stem(t) for t in tokens(text)}


def _scaled(values: list[float], span: float = 0.0) -> list[float]:
    """``values`` from 0 (the lowest) to 1 (the highest), or to less if they lie closer than ``span``."""
    low, high = min(values, default=0.0), max(values, default=0.0)
    width = max(high - low, span)
    return [0.0 if width == 0 else (v - low) / width for v in values]


def rescore(question: str, chunks: list[ChunkRow], fused: list[float], cosine: list[float | None],
            pool: list[ChunkRow]) -> list[float]:
    """Stage 2: one score per chunk of ``chunks`` (the best few), from the question's own words and the
    chunk's similarity; word rarity is counted over ``pool`` (every candidate)."""
    wanted = list(dict.fromkeys(_stem(t) for t in content_terms(question)))
    if not chunks:
        return []
    seen = [_terms(f"{c.title} {' '.join(c.heading)} {c.text}") for c in pool]
    df = {t: sum(t in s for s in seen) for t in wanted}
    # a word no candidate holds tells them apart no more than one all hold
    weight = {t: math.log(1 + (len(pool) + 1) / (n + 0.5)) for t, n in df.items() if n}
    total = sum(weight.values()) or 1.0

    def share(found: set[str]) -> float:
        return sum(w for t, w in weight.items() if t in found) / total

    words, near, heads = [], [], []
    for c in chunks:
        words.append(share(_terms(f"{c.title} {' '.join(c.heading)} {c.text}")))
        parts = [_terms(s) for s in sentences(c.text)] or [set()]
        near.append(max(share(a | b) for a, b in zip(parts, parts[1:] or [set()], strict=False)))
        heads.append(share(_terms(f"{c.title} {' '.join(c.heading)}")))
    sims = [v if v is not None else min((x for x in cosine if x is not None), default=0.0) for v in cosine]
    columns: list[Any] = [_scaled(sims, COSINE_SPAN), words, near, heads, _scaled(fused)]
    return [sum(w * col[i] for w, col in zip(WEIGHTS, columns, strict=True)) for i in range(len(chunks))]
