"""An embedder for indexing tests (the model is the edge of the world): a small vector made from the
text's hash, and a count of how many times each text was embedded."""

from __future__ import annotations

import hashlib
from collections import Counter

import anyio


class CountingEmbedder:
    name = "counting"
    dims = 8

    def __init__(self, delay: float = 0.0) -> None:
        self.embedded: Counter[str] = Counter()
        self.delay = delay  # seconds per call, so that two indexers' batches interleave

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        self.embedded.update(texts)
        await anyio.sleep(self.delay)  # stands for the model's time, not a wait for a state
        out = []
        for text in texts:
            raw = hashlib.sha256(text.encode()).digest()[: self.dims]
            vector = [b - 127.5 for b in raw]
            norm = sum(x * x for x in vector) ** 0.5
            out.append([x / norm for x in vector])
        return out
