"""Replicas sharing one PostgreSQL claim background indexing per batch: every row is embedded and
indexed once however many replicas index, and a batch left by a replica killed with -9 mid-way is
taken over once its lease has run out."""

from __future__ import annotations

import signal
import sys
import time
from collections import Counter

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_hub.services.memory.indexer import TERMS_MARK, VECTOR_BATCH, Indexer, in_context
from hermes_hub.infra.storage import Store, open_store
from hermes_hub.infra.storage.records import NewMessage, SessionRecord, utcnow
from hermes_hub.infra.storage.rows import vector_table
from tests.memory.counting_embedder import CountingEmbedder
from tests.postgres import new_database
from tests.support import PROJECT, until

pytestmark = pytest.mark.anyio
MESSAGES = 300


@pytest.fixture
async def pg_url(pg_server) -> str:
    return await new_database(pg_server)


async def fill(store: Store, n: int = MESSAGES) -> list[str]:
    """Messages of one session; what the indexer embeds for each (the message after the one before it)."""
    now = utcnow()
    await store.create_session(SessionRecord("ses_1", "alice", "t", now, now))
    texts = [f"note {i}: the folder holds invoice {i * 7}" for i in range(n)]
    for start in range(0, n, 50):
        await store.append_messages("alice", "ses_1", [NewMessage(f"m{i}", "user", texts[i], utcnow())
                                                       for i in range(start, min(n, start + 50))])
    return [in_context(text, texts[i - 1] if i else "") for i, text in enumerate(texts)]


async def index_counts(store: Store) -> tuple[int, int, int]:
    table = vector_table("messages", CountingEmbedder.name, CountingEmbedder.dims)
    [(terms, vectors, marked)] = await store.raw(
        f"SELECT (SELECT COUNT(*) FROM message_terms), (SELECT COUNT(*) FROM {table}), "
        f"(SELECT last_pk FROM index_marks WHERE name = '{table}')")
    return terms, vectors, marked


async def test_two_replicas_indexing_at_once_embed_and_index_each_row_exactly_once(pg_url: str):
    async with open_store(pg_url) as one, open_store(pg_url) as two:
        texts = await fill(one)
        embedders = [CountingEmbedder(delay=0.05), CountingEmbedder(delay=0.05)]
        indexers = [Indexer(one, embedders[0]), Indexer(two, embedders[1])]
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for indexer in indexers:
                    tg.start_soon(indexer.drain)
        together = embedders[0].embedded + embedders[1].embedded
        counts = await index_counts(one)
        left = await indexers[0].pending()
        claims = await one.raw("SELECT COUNT(*) FROM index_claims")
    assert together == Counter(texts)  # every message embedded once, by one replica or the other
    assert embedders[0].embedded and embedders[1].embedded  # and the work was shared
    assert counts == (MESSAGES, MESSAGES, MESSAGES) and not any(left.values()) and claims == [(0,)]


@pytest.mark.slow
async def test_a_batch_left_by_a_replica_killed_mid_embedding_is_indexed_after_its_lease(pg_url: str):
    lease = 2.0
    async with open_store(pg_url) as store:
        texts = await fill(store)
        argv = [sys.executable, "-m", "tests.memory.index_holder", pg_url, str(lease)]
        async with await anyio.open_process(argv, cwd=PROJECT) as holder:
            assert holder.stdout is not None
            with anyio.fail_after(30):
                line = await BufferedByteReceiveStream(holder.stdout).receive_until(b"\n", 100)
            holder.send_signal(signal.SIGKILL)
            await holder.wait()
        killed = time.monotonic()
        assert line == f"embedding {VECTOR_BATCH}".encode()
        embedder = CountingEmbedder()
        indexer = Indexer(store, embedder, lease=lease)
        await indexer.drain()  # everything but the dead replica's batch, which is still leased
        early = await indexer.pending()
        async def caught_up() -> bool:  # a step only takes the dead replica's batch once its lease ran out
            await indexer.step()
            return not any((await indexer.pending()).values())

        await until(caught_up, timeout=lease + 20, every=0.1)
        taken_over = time.monotonic() - killed
        counts = await index_counts(store)
        terms_mark = await store.index_mark(TERMS_MARK)
    assert early["messages_vectors"] == MESSAGES  # the mark waits behind the unfinished first batch
    assert embedder.embedded == Counter(texts)  # each row embedded once here; the dead one's work is redone
    assert counts == (MESSAGES, MESSAGES, MESSAGES) and terms_mark == MESSAGES
    assert taken_over < lease + 20
