"""Recall: lexical (BM25 over words and CJK bigrams) and vector (cosine) matches over a user's
memories and past messages, fused by reciprocal rank, then weighted by recency, recall history and
the time a question names.

    items = await recall(store, indexer, "ana", RecallQuery("where did I move?"), now=utcnow(), half_life_days=180)

Each list contributes ``weight / (RRF_K + rank)`` to an item; an item both lists found ranks above
one only a single list found. Superseded and archived memories are dropped unless asked for.

Provenance: a memory also gets ``SOURCE_WEIGHT`` of the contribution of its best source message in each
message list, so a memories-only recall ranks the messages too (their vectors are made in context: see
``indexer.in_context``). Those messages are not loaded, so only rows that were looked up and not found
leave the in-process vector index as deleted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio

from hermes_hub.services.memory.indexer import MAX_EMBED_CHARS, Indexer
from hermes_hub.services.memory.model import RecallItem, provenance
from hermes_hub.services.memory.vectors import VectorCache
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import MemoryRecord, RankedRow
from hermes_hub.infra.storage.terms import match_query

RRF_K = 10  # small: the top of each list matters most (measured on LoCoMo dev: 60 lost 0.07 recall@10)
CANDIDATES = 60  # per list: enough that filtering (superseded, time) still leaves ``limit``
LEXICAL_WEIGHT = 1.0
# A stored memory is one self-contained statement, which vectors match well; a chat message is often
# a short reply ("same here!") whose meaning sits in its context, which the lexical index carries.
VECTOR_WEIGHT = {"memories": 1.0, "messages": 0.6}
RECENCY_SHARE = 0.3  # how much of a memory's score depends on its age
IN_WINDOW_BOOST = 1.5  # an item inside the time a question names ("last week")
# Provenance: a memory whose source messages match the question gets this share of each message's
# contribution, as if it ranked where they do (measured on LoCoMo dev, bench/memory.py).
SOURCE_WEIGHT = 2.5
SOURCE_RANKS = 10  # the best messages of each list whose memories are credited (30: -0.005)


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
    if "memories" in q.sources:
        await _credit_sources(store, user_id, lists, fused)
    if "sessions" not in q.sources:  # messages ranked only for the memories written from them
        fused = {k: c for k, c in fused.items() if c.source == "memories"}
    mem_pks = [c.pk for c in fused.values() if c.source == "memories"]
    msg_pks = [c.pk for c in fused.values() if c.source == "messages"]
    memories, messages = await _load(store, user_id, mem_pks, msg_pks)
    asked = {"memories": set(mem_pks), "messages": set(msg_pks)}
    for name, (source, rows, _) in lists.items():
        table = indexer.table(source)
        if name.startswith("vector_") and table is not None:  # rows deleted since they were indexed
            # only rows looked up and not found: a memories-only recall ranks messages without loading them
            loaded = memories if source == "memories" else messages
            cache.discard(table, user_id, [r.pk for r in rows if r.pk in asked[source] and r.pk not in loaded])
    # score every candidate, build items for the best only (pydantic models for all 120 cost 0.7 ms)
    scored: list[tuple[float, _Candidate]] = []
    for c in fused.values():
        if c.source == "memories":
            rec = memories.get(c.pk)
            if rec is None or not _live(rec, q):
                continue
            score, when = _memory_score(rec, c.score, now, half_life_days), rec.event_time or rec.created_at
        else:
            row = messages.get(c.pk)
            if row is None or says_nothing(row[3]):
                continue
            score, when = c.score, row[4]
        if (q.since is not None and when < q.since) or (q.until is not None and when >= q.until):
            continue
        score = round(score, 6)
        if q.window is not None and q.window[0] <= when < q.window[1]:
            score *= IN_WINDOW_BOOST
        scored.append((score, c))
    scored.sort(key=lambda s: s[0], reverse=True)
    scored = _diverse(scored, memories)
    return [_memory_item(memories[c.pk], score) if c.source == "memories" else _message_item(messages[c.pk], score)
            for score, c in scored[:q.limit]]


async def _credit_sources(store: Store, user_id: str, lists: dict[str, tuple[str, list[RankedRow], float]],
                          fused: dict[tuple[str, int], _Candidate]) -> None:
    """Provenance in ranking: each memory written from a message a list found ranks, by ``SOURCE_WEIGHT``,
    where its best source message ranks in that list (once per list)."""
    message_lists = [(name, rows[:SOURCE_RANKS], weight) for name, (source, rows, weight) in lists.items()
                     if source == "messages"]
    pks = {row.pk for _, rows, _ in message_lists for row in rows}
    if not pks:
        return
    links: dict[int, list[int]] = {}
    for message_pk, memory_pk in await store.memories_of_messages(user_id, sorted(pks)):
        links.setdefault(message_pk, []).append(memory_pk)
    if not links:
        return
    for name, rows, weight in message_lists:
        credited: set[int] = set()
        for rank, row in enumerate(rows, start=1):
            for memory_pk in links.get(row.pk, ()):
                if memory_pk not in credited:
                    credited.add(memory_pk)
                    c = fused.setdefault(("memories", memory_pk), _Candidate("memories", memory_pk))
                    c.score += SOURCE_WEIGHT * weight / (RRF_K + rank)
                    c.ranks[f"source_{name}"] = rank


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

    def wanted(source: str, asked: str) -> bool:  # messages also rank the memories written from them
        return asked in q.sources or (source == "messages" and "memories" in q.sources)

    for source, asked in sources:
        if wanted(source, asked) and match:
            jobs.append(lexical(source))

    async def vectors() -> None:
        assert indexer.embedder is not None
        # cut as stored texts are: e5 reads 512 tokens, and a longer query only costs time
        [vector] = await indexer.embedder.embed([q.text[:MAX_EMBED_CHARS]], query=True)
        for source, asked in sources:
            table = indexer.table(source)
            if wanted(source, asked) and table is not None:
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
        if mem_pks:  # an empty list still costs a trip to a reader thread
            tg.start_soon(load_memories)
        if msg_pks:
            tg.start_soon(load_messages)
    return memories, messages


def _diverse(scored: list[tuple[float, _Candidate]], memories: dict[int, MemoryRecord],
             ) -> list[tuple[float, _Candidate]]:
    """Best first, except that a memory written only from messages the memories above it already came
    from goes after the rest: ten memories of ten conversations' moments beat ten of one."""
    covered: set[str] = set()
    first: list[tuple[float, _Candidate]] = []
    later: list[tuple[float, _Candidate]] = []
    for s, c in scored:
        rec = memories.get(c.pk) if c.source == "memories" else None
        ids = set((rec.source or {}).get("message_ids") or ()) if rec is not None else set()
        if ids and ids <= covered:
            later.append((s, c))
            continue
        covered |= ids
        first.append((s, c))
    return first + later


def _memory_score(rec: MemoryRecord, score: float, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now - (rec.last_recalled_at or rec.created_at)).total_seconds() / 86400)
    decay = 0.5 ** (age_days / half_life_days)
    score *= (1 - RECENCY_SHARE) + RECENCY_SHARE * decay
    return score * (1 + 0.05 * math.log1p(rec.recall_count))


def _memory_item(rec: MemoryRecord, score: float) -> RecallItem:
    return RecallItem(source="memory", memory_id=rec.id, text=rec.text, score=score,
                      created_at=rec.created_at, event_time=rec.event_time, superseded_by=rec.superseded_by,
                      kind=rec.kind, confidence=rec.confidence, flags=list(rec.flags),
                      provenance=provenance(rec.source))


def says_nothing(content: str) -> bool:
    """A message with nothing in it for a reader: blank (an assistant turn that only called tools), or a
    result whose data holds no items at any depth (``{"reminders": []}``, ``{"items": [], "total": 0}``)."""
    text = content.strip()
    if not text:
        return True
    if text[0] not in "[{" or len(text) > 4096:
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False

    def empty(value: Any, depth: int = 0) -> bool:
        if isinstance(value, dict):
            return depth < 4 and all(empty(v, depth + 1) for v in value.values())
        if isinstance(value, list):
            return not value
        return value in (None, "", 0, False)

    return empty(data)


def _message_item(row: tuple[Any, ...], score: float) -> RecallItem:
    mid, sid, role, content, created, _title = row
    return RecallItem(source="message", message_id=mid, session_id=sid, text=content, score=score,
                      created_at=created, role=role)


def _live(rec: MemoryRecord, q: RecallQuery) -> bool:
    if rec.superseded_by is not None and not q.include_superseded:
        return False
    return rec.state != "archived" or q.include_archived
