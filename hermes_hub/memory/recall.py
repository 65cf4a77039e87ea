"""Recall: lexical (BM25 over words and CJK bigrams) and vector (cosine) matches over a user's
memories and past messages, fused by reciprocal rank, then weighted by recency, recall history and
the time a question names.

    items = await recall(store, indexer, "ana", RecallQuery("where did I move?"), now=utcnow(), half_life_days=180)

Each list contributes ``weight / (RRF_K + rank)`` to an item; an item both lists found ranks above
one only a single list found. Superseded and archived memories are dropped unless asked for.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio

from hermes_hub.memory.indexer import Indexer
from hermes_hub.memory.model import RecallItem
from hermes_hub.memory.vectors import VectorCache
from hermes_hub.storage import Store
from hermes_hub.storage.records import MemoryRecord, RankedRow
from hermes_hub.storage.terms import match_query

RRF_K = 10  # small: the top of each list matters most (measured on LoCoMo dev: 60 lost 0.07 recall@10)
CANDIDATES = 60  # per list: enough that filtering (superseded, time) still leaves ``limit``
LEXICAL_WEIGHT = 1.0
# A stored memory is one self-contained statement, which vectors match well; a chat message is often
# a short reply ("same here!") whose meaning sits in its context, which the lexical index carries.
VECTOR_WEIGHT = {"memories": 1.0, "messages": 0.6}
RECENCY_SHARE = 0.3  # how much of a memory's score depends on its age
IN_WINDOW_BOOST = 1.5  # an item inside the time a question names ("last week")


@dataclass(frozen=True)
class RecallQuery:
    text: str
    limit: int = 10
    sources: tuple[str, ...] = ("memories", "sessions")
    since: datetime | None = None
    until: datetime | None = None
    include_superseded: bool = False
    include_archived: bool = False
    window: tuple[datetime, datetime] | None = None  # a time the question itself names
    lexical_text: str | None = None  # the question without that time expression


@dataclass
class _Candidate:
    source: str  # "memories" | "messages"
    pk: int
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)


async def recall(store: Store, indexer: Indexer, user_id: str, q: RecallQuery, *, now: datetime,
                 half_life_days: float, vectors: VectorCache | None = None) -> list[RecallItem]:
    cache = vectors or VectorCache(store)
    lists = await _ranked_lists(store, indexer, cache, user_id, q)
    fused: dict[tuple[str, int], _Candidate] = {}
    for name, (source, rows, weight) in lists.items():
        for rank, row in enumerate(rows, start=1):
            c = fused.setdefault((source, row.pk), _Candidate(source, row.pk))
            c.score += weight / (RRF_K + rank)
            c.ranks[name] = rank
    mem_pks = [c.pk for c in fused.values() if c.source == "memories"]
    msg_pks = [c.pk for c in fused.values() if c.source == "messages"]
    memories, messages = await _load(store, user_id, mem_pks, msg_pks)
    for name, (source, rows, _) in lists.items():
        table = indexer.table(source)
        if name.startswith("vector_") and table is not None:  # rows deleted since they were indexed
            loaded = memories if source == "memories" else messages
            cache.discard(table, user_id, [r.pk for r in rows if r.pk not in loaded])
    items: list[RecallItem] = []
    for c in fused.values():
        item = (_memory_item(memories.get(c.pk), c.score, now, half_life_days) if c.source == "memories"
                else _message_item(messages.get(c.pk), c.score))
        if item is None or not _wanted(item, memories.get(c.pk) if c.source == "memories" else None, q):
            continue
        when = item.event_time or item.created_at
        if q.window is not None and q.window[0] <= when < q.window[1]:
            item.score *= IN_WINDOW_BOOST
        items.append(item)
    items.sort(key=lambda i: i.score, reverse=True)
    return items[:q.limit]


async def _ranked_lists(store: Store, indexer: Indexer, cache: VectorCache, user_id: str, q: RecallQuery,
                        ) -> dict[str, tuple[str, list[RankedRow], float]]:
    """Every ranked list the question yields, run concurrently: name -> (source, rows, weight)."""
    out: dict[str, tuple[str, list[RankedRow], float]] = {}
    sources = [("memories", "memories"), ("messages", "sessions")]
    match = match_query(q.lexical_text or q.text)
    jobs: list[Callable[[], Awaitable[None]]] = []

    def lexical(source: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            out[f"lexical_{source}"] = (source, await store.lexical_search(source, user_id, match or "",
                                                                           CANDIDATES), LEXICAL_WEIGHT)
        return run

    for source, wanted in sources:
        if wanted in q.sources and match:
            jobs.append(lexical(source))

    async def vectors() -> None:
        assert indexer.embedder is not None
        [vector] = await indexer.embedder.embed([q.text], query=True)
        for source, wanted in sources:
            table = indexer.table(source)
            if wanted in q.sources and table is not None:
                out[f"vector_{source}"] = (source, await cache.nearest(table, user_id, vector, CANDIDATES),
                                           VECTOR_WEIGHT[source])

    if indexer.embedder is not None:
        jobs.append(vectors)
    async with anyio.create_task_group() as tg:
        for job in jobs:
            tg.start_soon(job)
    return out


async def _load(store: Store, user_id: str, mem_pks: list[int], msg_pks: list[int],
                ) -> tuple[dict[int, MemoryRecord], dict[int, tuple[Any, ...]]]:
    memories: dict[int, MemoryRecord] = {}
    messages: dict[int, tuple[Any, ...]] = {}

    async def load_memories() -> None:
        memories.update(await store.memories_by_pk(user_id, mem_pks))

    async def load_messages() -> None:
        messages.update(await store.messages_by_pk(user_id, msg_pks))

    async with anyio.create_task_group() as tg:
        tg.start_soon(load_memories)
        tg.start_soon(load_messages)
    return memories, messages


def _memory_item(rec: MemoryRecord | None, score: float, now: datetime, half_life_days: float) -> RecallItem | None:
    if rec is None:
        return None
    age_days = max(0.0, (now - (rec.last_recalled_at or rec.created_at)).total_seconds() / 86400)
    decay = 0.5 ** (age_days / half_life_days)
    score *= (1 - RECENCY_SHARE) + RECENCY_SHARE * decay
    score *= 1 + 0.05 * math.log1p(rec.recall_count)
    return RecallItem(source="memory", memory_id=rec.id, text=rec.text, score=round(score, 6),
                      created_at=rec.created_at, event_time=rec.event_time, superseded_by=rec.superseded_by,
                      kind=rec.kind, flags=list(rec.flags))


def _message_item(row: tuple[Any, ...] | None, score: float) -> RecallItem | None:
    if row is None:
        return None
    mid, sid, role, content, created, _title = row
    return RecallItem(source="message", message_id=mid, session_id=sid, text=content, score=round(score, 6),
                      created_at=created, role=role)


def _wanted(item: RecallItem, rec: MemoryRecord | None, q: RecallQuery) -> bool:
    if rec is not None:
        if rec.superseded_by is not None and not q.include_superseded:
            return False
        if rec.state == "archived" and not q.include_archived:
            return False
    when = item.event_time or item.created_at
    if q.since is not None and when < q.since:
        return False
    return not (q.until is not None and when >= q.until)
