"""Background indexing: the lexical terms of session messages, and the vectors of memories and
messages, brought up to date off the request path.

Work is found through marks in the store ("every row past pk N is not indexed yet"); a batch's index
rows and its new mark are written in one transaction, so after a crash or restart indexing resumes
where it stopped and each row is indexed exactly once. ``pending()`` says how much is left, for
status and for scripts that wait until recall sees everything.
"""

from __future__ import annotations

import logging
import time

from hermes_hub.memory.embedders import Embedder, EmbedderError
from hermes_hub.storage import Store
from hermes_hub.storage.sqlite_memory import vector_table
from hermes_hub.storage.terms import index_text
from hermes_hub.worker import QueueWorker

log = logging.getLogger("hermes_hub.memory")

TERMS_MARK = "terms_messages"
TERMS_BATCH = 500
VECTOR_BATCH = 64
IDLE_POLL = 1.0  # seconds between looks for new rows when idle (writers also wake the indexer)
RETRY_AFTER = 30.0  # after an embedder failure
MAX_EMBED_CHARS = 2000  # e5 reads 512 tokens; longer text only costs time


class Indexer(QueueWorker):
    name = "memory indexing"
    idle_poll = IDLE_POLL

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        super().__init__()  # ``error``: the embedder's last failure, for status
        self.store = store
        self.embedder = embedder
        self._paused_until = 0.0

    def table(self, source: str) -> str | None:
        """The vector table of ``source`` for the current embedder (None without vectors)."""
        if self.embedder is None or not self.embedder.dims:
            return None
        return vector_table(source, self.embedder.name, self.embedder.dims)

    async def pending(self) -> dict[str, int]:
        """Rows not indexed yet, per index."""
        out = {"message_terms": await self.store.pending_index("messages", TERMS_MARK)}
        if self.embedder is not None:
            for source in ("memories", "messages"):
                mark = vector_table(source, self.embedder.name, self.embedder.dims or 1)
                out[f"{source}_vectors"] = await self.store.pending_index(source, mark)
        return out

    def failed(self, error: Exception) -> None:
        """An embedder that fails pauses vector indexing for ``RETRY_AFTER``; anything else ends ``run``."""
        if not isinstance(error, EmbedderError):
            raise error
        if self.error != str(error):
            log.warning("memory indexing paused for %gs: %s", RETRY_AFTER, error)
        self.error, self._paused_until = str(error), time.monotonic() + RETRY_AFTER

    async def step(self) -> bool:
        """Index one batch of whatever is behind; False when nothing was."""
        busy = await self._terms()
        if self.embedder is not None and time.monotonic() >= self._paused_until:
            for source in ("memories", "messages"):
                busy = await self._vectors(source) or busy
        return busy

    async def _terms(self) -> bool:
        rows = await self.store.unindexed_messages(TERMS_MARK, TERMS_BATCH)
        if not rows:
            return False
        await self.store.index_message_terms([(pk, index_text(text), index_text(prev)) for pk, _, text, prev in rows],
                                             mark=TERMS_MARK, last_pk=rows[-1][0])
        return True

    async def _vectors(self, source: str) -> bool:
        assert self.embedder is not None
        mark = vector_table(source, self.embedder.name, self.embedder.dims or 1)
        rows = await self.store.unindexed(source, mark, VECTOR_BATCH)
        if not rows:
            return False
        vectors = await self.embedder.embed([text[:MAX_EMBED_CHARS] for _, _, text in rows], query=False)
        self.error = None
        table = await self.store.ensure_vector_table(source, self.embedder.name, len(vectors[0]))
        await self.store.add_vectors(table, [(pk, uid, v) for (pk, uid, _), v in zip(rows, vectors, strict=True)],
                                     mark=table, last_pk=rows[-1][0])
        return True
