"""Background indexing: the lexical terms of session messages, and the vectors of memories and
messages, brought up to date off the request path.

Work is found through marks in the store ("every row past pk N is not indexed yet"); a batch's index
rows and its new mark are written in one transaction, so after a crash or restart indexing resumes
where it stopped and each row is indexed exactly once. Replicas sharing a database claim batches
(``owner``, with a lease renewed while the embedder runs): no two embed or index the same rows, and
a batch left by a replica killed mid-way is taken over once its lease has run out. ``pending()``
says how much is left, for status and for scripts that wait until recall sees everything.

A message is embedded in its context: the end of the message before it in its session, then the
message (``in_context``). A chat message is often a reply ("same here, every Sunday!") whose subject
sits in the message it answers; the lexical index gives that message a context column for the same
reason. Measured on LoCoMo dev (bench/memory.py): recall@10 over turns 0.732 -> 0.752, and over facts
credited through their source messages 0.673 -> 0.685. Vectors written before this stay as they were
until ``hermes-hub memory reindex``.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid

from hermes_hub.services.memory.embedders import Embedder, EmbedderError
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.queue import QueueWorker, while_held
from hermes_hub.infra.storage.rows import vector_table
from hermes_hub.infra.storage.terms import index_text

log = logging.getLogger("hermes_hub.services.memory")

TERMS_MARK = "terms_messages"
TERMS_BATCH = 500
VECTOR_BATCH = 64
IDLE_POLL = 1.0  # seconds between looks for new rows when idle (writers also wake the indexer)
RETRY_AFTER = 30.0  # after an embedder failure
MAX_EMBED_CHARS = 2000  # e5 reads 512 tokens; longer text only costs time
CONTEXT_CHARS = 500  # of the message before, embedded ahead of a message (its context)
LEASE = 60.0  # seconds a claimed batch stays this indexer's without a renewal (renewed every third)


class Indexer(QueueWorker):
    name = "memory indexing"
    idle_poll = IDLE_POLL

    def __init__(self, store: Store, embedder: Embedder | None, *, lease: float = LEASE) -> None:
        super().__init__()  # ``error``: the embedder's last failure, for status
        self.store = store
        self.embedder = embedder
        self.lease = lease
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"  # whose batch, in claims
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
        rows = await self.store.unindexed_messages(TERMS_MARK, TERMS_BATCH, owner=self.owner, lease=self.lease)
        if not rows:
            return False
        await self.store.index_message_terms([(pk, index_text(text), index_text(prev)) for pk, _, text, prev in rows],
                                             mark=TERMS_MARK, last_pk=rows[-1][0], owner=self.owner)
        return True

    async def _vectors(self, source: str) -> bool:
        assert self.embedder is not None
        if not self.embedder.dims:  # the batch is claimed under its table's name, so learn the size first
            await self.embedder.embed(["size"], query=False)
        mark = vector_table(source, self.embedder.name, self.embedder.dims)
        rows: list[tuple[int, str, str]]
        if source == "messages":  # each message with the one before it in its session
            rows = [(pk, uid, in_context(text, prev)) for pk, uid, text, prev in
                    await self.store.unindexed_messages(mark, VECTOR_BATCH, owner=self.owner, lease=self.lease)]
        else:
            rows = await self.store.unindexed(source, mark, VECTOR_BATCH, owner=self.owner, lease=self.lease)
        if not rows:
            return False

        async def renew() -> bool:
            return await self.store.renew_index_claim(mark, self.owner, lease=self.lease)

        async def embed() -> list[list[float]]:
            assert self.embedder is not None
            return await self.embedder.embed([text[:MAX_EMBED_CHARS] for _, _, text in rows], query=False)

        vectors = await while_held(renew, self.lease, embed)
        self.error = None
        table = await self.store.ensure_vector_table(source, self.embedder.name, len(vectors[0]))
        await self.store.add_vectors(table, [(pk, uid, v) for (pk, uid, _), v in zip(rows, vectors, strict=True)],
                                     mark=table, last_pk=rows[-1][0], owner=self.owner)
        return True


def in_context(text: str, previous: str) -> str:
    """What is embedded for a message: the last ``CONTEXT_CHARS`` of the message before it (none for a
    session's first), a line break, then the message, cut at ``MAX_EMBED_CHARS`` as every text is."""
    if not previous:
        return text[:MAX_EMBED_CHARS]
    return f"{previous[-CONTEXT_CHARS:]}\n{text}"[:MAX_EMBED_CHARS]
