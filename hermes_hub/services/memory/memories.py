"""Long-term memory per user: remember, recall, list, forget, restore, archive, history, export.

    memories = Memories(store, config.memory)
    async with memories:                        # runs the indexer and the archiver in the background
        out = await memories.remember("ana", "I moved to Oslo", kind="fact")
        items = await memories.recall("ana", RecallQuery("where do I live?"))

Every operation takes the caller's ``user_id`` and touches only that user's rows: another user's
memory id raises the same ``NotFound`` as one that never existed. Bad input raises ``InvalidInput``
naming the field and the fix, and changes nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from hermes_hub.infra.config import MemorySection
from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory import model, timeparse
from hermes_hub.services.memory.embedders import Embedder, make_embedder
from hermes_hub.services.memory.indexer import TERMS_MARK, Indexer
from hermes_hub.services.memory.model import HistoryEntry, Memory, RecallItem
from hermes_hub.services.memory.recall import RecallQuery, recall
from hermes_hub.services.memory.vectors import VectorCache
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import MEMORY_STATES, MemoryEvent, MemoryRecord, utcnow

if TYPE_CHECKING:
    from hermes_hub.services.memory.extraction import Extractor
    from hermes_hub.infra.models import Provider

log = logging.getLogger("hermes_hub.services.memory")
MAX_PAGE = 200
ARCHIVE_EVERY = 3600.0  # seconds between archive passes
TOUCH_EVERY = 2.0  # seconds between writes of recall bookkeeping


class Memories:
    def __init__(self, store: Store, cfg: MemorySection | None = None, *, embedder: Embedder | None = None,
                 use_config_embedder: bool = True, judge: Provider | None = None) -> None:
        """``judge``: the model that extracts memories from conversations (None: explicit writes only)."""
        self.store = store
        self.cfg = cfg or MemorySection()
        self.embedder = embedder if embedder is not None or not use_config_embedder else make_embedder(self.cfg)
        self.indexer = Indexer(store, self.embedder)
        self.vectors = VectorCache(store)
        self.extractor: Extractor | None = None
        if judge is not None:
            from hermes_hub.services.memory.extraction import Extractor

            self.extractor = Extractor(store, judge, functools.partial(self.recall, touch=False),
                                       min_confidence=self.cfg.min_confidence, lease=self.cfg.job_lease)
        self._touched: dict[str, set[str]] = {}  # user -> memory ids recalled since the last write
        self._stack = AsyncExitStack()

    # -- lifecycle --------------------------------------------------------------------------------

    async def __aenter__(self) -> Memories:
        if self.embedder is not None and self.embedder.dims:
            for source in ("memories", "messages"):
                await self.store.ensure_vector_table(source, self.embedder.name, self.embedder.dims)
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)
        self._stack.push_async_callback(self._write_touches)  # after the loops stop: the last bookkeeping
        tg.start_soon(self.indexer.run)
        if self.extractor is not None:
            tg.start_soon(self.extractor.run)
        tg.start_soon(self._archive_loop)
        tg.start_soon(self._touch_loop)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    # -- writing ----------------------------------------------------------------------------------

    async def remember(self, user_id: str, text: Any, *, kind: Any = "fact", event_time: Any = None,
                       confidence: Any = 1.0, supersedes: str | None = None, actor: str | None = None,
                       source: dict[str, Any] | None = None, reason: str = "",
                       source_message_ids: Any = None) -> dict[str, Any]:
        """Store a memory; ``{memory_id, status}`` with status added, duplicate or superseded.
        ``source_message_ids``: the caller's messages it comes from (its provenance, used in recall)."""
        text = model.check_text(text)
        kind = model.check_kind(kind)
        if source_message_ids is not None:
            source = {**(source or {"type": "explicit"}), **await self._sources(user_id, source_message_ids)}
        now = utcnow()
        when = model.parse_time(event_time, "event_time")
        if when is None and (span := timeparse.resolve(text, now)) is not None:
            when = span.start  # "I moved to Oslo last week": when it happened, not when it was said
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            raise InvalidInput(f"confidence must be a number from 0 to 1 (got {model.quoted(str(confidence))})")
        key = model.normalized(text)
        if supersedes is None and (same := await self.store.find_duplicate_memory(user_id, key)):
            return {"memory_id": same, "status": "duplicate", "duplicate_of": same}
        flags: tuple[str, ...] = ()
        if model.looks_like_injection(text):
            flags = ("injection",)  # data, never instructions: kept as a note a model must not obey
            kind = "note"
        rec = MemoryRecord(id="mem_" + secrets.token_urlsafe(9), user_id=user_id, text=text, kind=kind,
                           confidence=float(confidence), source=source or {"type": "explicit"}, created_at=now,
                           event_time=when, flags=flags)
        who = actor or f"user:{user_id}"
        event = MemoryEvent(rec.id, user_id, now, "added", who, reason or ("remembered on request" if actor is None
                                                                             else ""),
                            {"kind": kind, "flags": list(flags)} if flags else {"kind": kind})
        await self.store.add_memory(rec, event, key=key, supersedes=supersedes)
        self.indexer.wake()
        out: dict[str, Any] = {"memory_id": rec.id, "status": "superseded" if supersedes else "added"}
        if supersedes:
            out["superseded"] = supersedes
        if flags:
            out["flags"] = list(flags)
        return out

    async def _sources(self, user_id: str, ids: Any) -> dict[str, Any]:
        ids = model.check_source_ids(ids)
        found = await self.store.source_messages(user_id, ids)
        missing = [i for i in ids if i not in {f[0] for f in found}]
        if missing:  # another user's message id reads as one that never existed
            raise InvalidInput(f"source message {model.quoted(missing[0])} is not one of your messages; pass ids "
                               f"from hermes_session_history (message_id)")
        sessions = list(dict.fromkeys(sid for _, sid, _ in found))
        out: dict[str, Any] = {"session_id": sessions[-1], "message_ids": [mid for mid, _, _ in found],
                               "at": found[-1][2].isoformat()}
        if len(sessions) > 1:
            out["session_ids"] = sessions
        return out

    async def forget_session(self, user_id: str, session_id: str, *, confirm: bool = False) -> dict[str, Any]:
        """The memories written only from ``session_id``'s messages: counted, or forgotten with ``confirm``."""
        ids = await self.store.memories_only_from_session(user_id, session_id)
        if not confirm:
            return {"session_id": session_id, "would_forget": len(ids), "memory_ids": ids[:MAX_PAGE],
                    "next": "call again with confirm: true to forget them" if ids else "nothing to forget"}
        for mid in ids:
            await self.store.delete_memories(user_id, mid)
        return {"session_id": session_id, "forgotten": len(ids)}

    async def forget(self, user_id: str, memory_id: str) -> dict[str, Any]:
        await self.store.delete_memories(user_id, memory_id)
        # its vector leaves the in-process index when recall first finds its row gone (vectors.py)
        return {"forgotten": memory_id}

    async def forget_all(self, user_id: str) -> dict[str, Any]:
        n = await self.store.delete_memories(user_id, None)
        self.vectors.forget(user_id=user_id)
        return {"forgotten": n}

    async def restore(self, user_id: str, memory_id: str) -> Memory:
        event = MemoryEvent(memory_id, user_id, utcnow(), "restored", f"user:{user_id}", "restored on request")
        return model.memory(await self.store.set_memory_state(user_id, memory_id, "active", event))

    async def archive(self, user_id: str, memory_id: str) -> Memory:
        event = MemoryEvent(memory_id, user_id, utcnow(), "archived", f"user:{user_id}", "archived on request")
        return model.memory(await self.store.set_memory_state(user_id, memory_id, "archived", event))

    async def archive_idle(self, *, now: datetime | None = None) -> int:
        """Archive every memory not recalled for ``archive_after_days``; return how many."""
        if self.cfg.archive_after_days <= 0:
            return 0
        now = now or utcnow()
        await self._write_touches()
        return await self.store.archive_idle_memories(now - timedelta(days=self.cfg.archive_after_days), at=now)

    # -- reading ----------------------------------------------------------------------------------

    async def recall(self, user_id: str, q: RecallQuery, *, touch: bool = True) -> list[RecallItem]:
        """Best first. ``touch``: count it as a use of the memories returned (keeps them from being
        archived); the judge's own look-ups do not."""
        model.check_text(q.text, "query", model.MAX_QUERY_CHARS)
        if not 1 <= q.limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be from 1 to {MAX_PAGE} (got {q.limit})")
        unknown = set(q.sources) - {"memories", "sessions"}
        if unknown or not q.sources:
            raise InvalidInput(f"sources must be a non-empty list of 'memories' and 'sessions' "
                               f"(got {sorted(q.sources)})")
        now = utcnow()
        if q.window is None and (asked := timeparse.query_window(q.text, now)) is not None:
            # "what did I do last week": items of that time rank higher; its words are not searched for
            q = dataclasses.replace(q, window=(asked.span.start, asked.span.end), lexical_text=asked.rest)
        items = await recall(self.store, self.indexer, user_id, q, now=now, half_life_days=self.cfg.half_life_days,
                             vectors=self.vectors)
        recalled = {i.memory_id for i in items if i.memory_id}
        if recalled and touch:  # bookkeeping off the request path
            self._touched.setdefault(user_id, set()).update(recalled)
        return items

    async def get(self, user_id: str, memory_id: str) -> Memory:
        return model.memory(await self.store.get_memory(user_id, memory_id))

    async def listing(self, user_id: str, *, state: str | None = None, kind: str | None = None, limit: int = 50,
                   cursor: str | None = None) -> dict[str, Any]:
        if state is not None and state not in MEMORY_STATES:
            raise InvalidInput(f"state must be one of {', '.join(MEMORY_STATES)} (got {model.quoted(str(state))})")
        if kind is not None:
            model.check_kind(kind)
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be from 1 to {MAX_PAGE} (got {limit})")
        rows = await self.store.list_memories(user_id, state=state, kind=kind, limit=limit + 1,
                                              before_pk=_cursor(cursor))
        page = rows[:limit]
        nxt = str(page[-1][0]) if len(rows) > limit else None
        return {"memories": [model.memory(r).model_dump(mode="json") for _, r in page], "next_cursor": nxt}

    async def history(self, user_id: str, memory_id: str) -> list[HistoryEntry]:
        return [model.history_entry(e) for e in await self.store.memory_events(user_id, memory_id)]

    async def export(self, user_id: str, fmt: str) -> str:
        if fmt not in ("json", "markdown"):
            raise InvalidInput(f"format must be 'json' or 'markdown' (got {model.quoted(str(fmt))})")
        every = [model.memory(r) async for r in self._all(user_id)]
        if fmt == "json":
            return json.dumps([m.model_dump(mode="json") for m in every], ensure_ascii=False, indent=2)
        lines = [f"# Memories of {user_id}", ""]
        for state in MEMORY_STATES:
            chosen = [m for m in every if m.state == state]
            if chosen:
                lines += [f"## {state.capitalize()}", ""]
                for m in chosen:
                    when = f" (event: {m.event_time:%Y-%m-%d})" if m.event_time else ""
                    gone = f" — superseded by {m.superseded_by}" if m.superseded_by else ""
                    lines.append(f"- [{m.kind}] {m.text}{when}{gone} `{m.memory_id}`")
                lines.append("")
        return "\n".join(lines)

    async def _all(self, user_id: str) -> AsyncIterator[MemoryRecord]:
        before: int | None = None
        while True:
            rows = await self.store.list_memories(user_id, limit=MAX_PAGE, before_pk=before)
            for _, rec in rows:
                yield rec
            if len(rows) < MAX_PAGE:
                return
            before = rows[-1][0]

    async def reset_index(self) -> list[str]:
        """Forget every background index (vectors of any embedder, the messages' text index) so the
        indexer rebuilds them with the current embedder; return the vector tables dropped."""
        dropped = await self.store.drop_vector_tables()
        self.vectors.forget()
        await self.store.reset_message_terms(TERMS_MARK)
        if self.embedder is not None and self.embedder.dims:
            for source in ("memories", "messages"):
                await self.store.ensure_vector_table(source, self.embedder.name, self.embedder.dims)
        return dropped

    async def status(self, user_id: str | None) -> dict[str, Any]:
        """The memory subsystem for ``hermes_hub_status``: embedder, counts (of ``user_id``'s memories;
        None: everyone's), queue depths."""
        pending = await self.indexer.pending()
        out: dict[str, Any] = {
            "embedder": self.embedder.name if self.embedder else "none (lexical recall only)",
            "dimensions": self.embedder.dims if self.embedder else None,
            "embedder_error": self.indexer.error,
            "extraction": "off (no model configured in agent; only explicit remember writes)",
            "memories": await self.store.count_memories(user_id),
            "pending": pending,
        }
        if self.extractor is not None:
            jobs = await self.store.extraction_counts()
            out["extraction"] = f"on (judge: {self.extractor.provider.name})"
            out["extraction_jobs"] = jobs
            out["extraction_error"] = self.extractor.error
            pending["extraction"] = jobs.get("unscheduled", 0) + jobs.get("pending", 0) + jobs.get("running", 0)
        return out

    async def wait_idle(self) -> None:
        """Return once extraction, then indexing, has caught up with everything written before the call
        (extraction writes memories, which indexing then embeds). Callers bound it."""
        if self.extractor is not None:
            await self.extractor.wait_idle()
        await self.indexer.wait_idle()

    # -- background -------------------------------------------------------------------------------

    async def _archive_loop(self) -> None:
        while True:
            try:
                if n := await self.archive_idle():
                    log.info("archived %d memories not recalled for %g days", n, self.cfg.archive_after_days)
            except Exception:  # noqa: BLE001 - a failed pass is retried at the next one
                log.exception("archiving idle memories failed")
            await anyio.sleep(ARCHIVE_EVERY)

    async def _touch_loop(self) -> None:
        while True:
            await anyio.sleep(TOUCH_EVERY)
            await self._write_touches()

    async def _write_touches(self) -> None:
        touched, self._touched = self._touched, {}
        now = utcnow()
        for user_id, ids in touched.items():
            try:
                await self.store.touch_memories(user_id, sorted(ids), at=now)
            except Exception:  # noqa: BLE001 - bookkeeping only; never fails a recall
                log.warning("could not record the recall of %d memories of %s", len(ids), user_id)


def _cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    if not cursor.isdigit():
        raise InvalidInput(f"cursor {model.quoted(cursor)} is not one this tool returned; pass next_cursor as it "
                           f"was given")
    return int(cursor)
