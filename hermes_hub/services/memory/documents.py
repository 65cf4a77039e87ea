"""A person's documents, the knowledge layer of memory: add (text, a file or a URL under ``docs.roots``),
list, forget, read back, and recall over them.

    docs = Documents(store, embedder)
    async with docs:                               # embeds new chunks in the background
        out = await docs.add("ana", text="# Trip\\n\\nThe hotel is on Rua Augusta.", title="Lisbon trip")
        hits = await docs.recall("ana", "where is the hotel?", limit=5)

A document is chunked at once (``chunking``) and its words indexed in the same transaction, so it is
found by its words as soon as ``add`` returns; its vectors follow in the background. Documents are the
adder's own; an admin may add ``shared`` ones that every user reads. Another user's document id raises
the ``NotFound`` of one that never existed, and forgetting removes text, chunks, index and vectors.
"""

from __future__ import annotations

import logging
import secrets
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory import formats
from hermes_hub.services.memory.chunking import Chunk, chunk
from hermes_hub.services.memory.embedders import Embedder
from hermes_hub.services.memory.retrieval import MAX_EMBED_CHARS, ChunkVectors, pack, retrieve
from hermes_hub.services.memory.sources import Roots, fetch_url, read_file
from hermes_hub.infra.storage.documents import ChunkRow, DocumentRecord, DocumentStore
from hermes_hub.infra.storage.records import utcnow

log = logging.getLogger("hermes_hub.services.memory")
MAX_TEXT_CHARS = 2_000_000  # of a document's text, after reading its format
MAX_CHUNKS = 5000
MAX_QUERY_CHARS = 4000
MAX_TITLE_CHARS = 300
MAX_PAGE = 200
EMBED_BATCH = 16
RETRY_AFTER = 5.0  # seconds after a failed embedding batch


class DocumentHit(BaseModel):
    source: Literal["document"] = "document"
    document_id: str
    title: str
    heading_path: list[str]
    position: int  # the chunk's place in its document, 0 first
    text: str
    score: float


def _describe(r: DocumentRecord) -> dict[str, Any]:
    return {"document_id": r.id, "title": r.title, "origin": r.origin, "format": r.format, "chars": r.chars,
            "chunks": r.chunks, "shared": r.shared, "created_at": r.created_at.isoformat()}


def _prepare(data: bytes | str, fmt: str) -> tuple[formats.Parsed, list[Chunk]]:
    parsed = formats.read(data, fmt)
    if len(parsed.text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"the document's text is {len(parsed.text):,} characters; at most {MAX_TEXT_CHARS:,} "
                           f"are accepted: split it")
    return parsed, chunk(parsed.blocks)


class Documents:
    def __init__(self, store: DocumentStore, embedder: Embedder | None) -> None:
        self.store = store
        self.embedder = embedder if embedder is not None and embedder.dims else None
        self.vectors = ChunkVectors(store)
        self.error: str | None = None  # the embedder's last failure, for status
        self._wake = anyio.Event()
        self._drained = anyio.Event()
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Documents:
        if self.embedder is not None:
            tg = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(tg.cancel_scope.cancel)
            tg.start_soon(self._embed_loop)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    # -- writing ----------------------------------------------------------------------------------

    async def add(self, user_id: str, *, text: str | None = None, path: str | None = None, url: str | None = None,
                  title: str | None = None, fmt: str | None = None, shared: bool = False, admin: bool = False,
                  roots: Roots = Roots((), ()), max_bytes: int = 10_000_000, timeout: float = 20.0) -> dict[str, Any]:
        given = [k for k, v in (("text", text), ("path", path), ("url", url)) if v is not None]
        if len(given) != 1:
            raise InvalidInput("give exactly one of text (the document itself), path (a file under docs.roots) or "
                               f"url (under docs.roots); got {', '.join(given) or 'none'}")
        if shared and not admin:
            raise InvalidInput("only an admin may add a shared document (one every user reads); add it as your own "
                               "by leaving shared out")
        if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE_CHARS):
            raise InvalidInput(f"title must be text of at most {MAX_TITLE_CHARS} characters")
        if text is not None:
            if len(text) > MAX_TEXT_CHARS:
                raise InvalidInput(f"text is {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are accepted")
            data: bytes | str = text
            origin, name, fmt = "text", "", formats.guess(fmt or "markdown")
        elif path is not None:
            data, name = await read_file(path, roots, max_bytes)
            origin, fmt = path, formats.guess(fmt, name, data=data)
        else:
            assert url is not None
            data, origin, content_type = await fetch_url(url, roots, max_bytes, timeout)
            name = origin
            fmt = formats.guess(fmt, origin, content_type, data)
        parsed, chunks = await anyio.to_thread.run_sync(_prepare, data, fmt)
        if not chunks:
            raise InvalidInput("the document holds no text to search; check it is not empty (or a scan)")
        if len(chunks) > MAX_CHUNKS:
            raise InvalidInput(f"the document makes {len(chunks):,} chunks; at most {MAX_CHUNKS:,}: split it")
        name_title = name.rstrip("/").rsplit("/", 1)[-1]
        first_line = chunks[0].text.split("\n", 1)[0][:80]
        record = DocumentRecord("doc_" + secrets.token_urlsafe(9), user_id, shared,
                                (title or parsed.title or name_title or first_line)[:MAX_TITLE_CHARS], origin, fmt,
                                len(parsed.text), len(chunks), utcnow(), parsed.text)
        await self.store.add_document(record, [ChunkRow(c.position, c.heading, c.text) for c in chunks])
        self._wake_embedder()
        out = _describe(record)
        out["vectors"] = "pending" if self.embedder is not None else "none (word search only)"
        return out

    async def forget(self, user_id: str, document_id: str, *, admin: bool = False) -> dict[str, Any]:
        await self.store.delete_documents(user_id, document_id, admin=admin)
        return {"forgotten": document_id}

    async def forget_all(self, user_id: str) -> dict[str, Any]:
        """Every document the user added (shared ones they added as an admin included)."""
        return {"forgotten": await self.store.delete_documents(user_id, None, admin=False)}

    # -- reading ----------------------------------------------------------------------------------

    async def listing(self, user_id: str, *, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be from 1 to {MAX_PAGE} (got {limit})")
        if cursor is not None and not (isinstance(cursor, str) and cursor.isdigit()):
            raise InvalidInput("cursor must be the next_cursor of a previous hermes_docs_list answer")
        rows = await self.store.list_documents(user_id, limit + 1, int(cursor) if cursor else None)
        page = rows[:limit]
        return {"documents": [_describe(r) for _, r in page],
                "next_cursor": str(page[-1][0]) if len(rows) > limit else None}

    async def get(self, user_id: str, document_id: str) -> DocumentRecord:
        return await self.store.get_document(user_id, document_id)

    async def recall(self, user_id: str, question: str, *, limit: int = 10) -> list[DocumentHit]:
        if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query must be non-empty text of at most {MAX_QUERY_CHARS:,} characters")
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be from 1 to {MAX_PAGE} (got {limit})")
        hits = await retrieve(self.store, self.embedder, self.vectors, user_id, question, limit)
        return [DocumentHit(document_id=h.chunk.document_id, title=h.chunk.title, heading_path=list(h.chunk.heading),
                            position=h.chunk.position, text=h.chunk.text, score=h.score) for h in hits]

    async def status(self, user_id: str | None) -> dict[str, Any]:
        return {**await self.store.document_counts(user_id), "embedder_error": self.error}

    async def wait_idle(self) -> None:
        """Return once every chunk stored before the call has its vector (callers bound it)."""
        if self.embedder is None:
            return
        while await self.store.unembedded_chunks(self.embedder.name, 1):
            if self._drained.is_set():  # drained before these rows came (another replica's)
                self._drained = anyio.Event()
            drained = self._drained
            self._wake.set()
            await drained.wait()

    # -- background -------------------------------------------------------------------------------

    def _wake_embedder(self) -> None:
        old, self._drained = self._drained, anyio.Event()
        old.set()  # whoever waits looks again, and finds the new rows
        self._wake.set()

    async def _embed_loop(self) -> None:
        assert self.embedder is not None
        name = self.embedder.name
        while True:
            try:
                batch = await self.store.unembedded_chunks(name, EMBED_BATCH)
                if not batch:
                    self._drained.set()
                    await self._wake.wait()
                    self._wake = anyio.Event()
                    continue
                vectors = await self.embedder.embed([t[:MAX_EMBED_CHARS] for _, t in batch], query=False)
                await self.store.set_chunk_vectors(name, [(pk, pack(v)) for (pk, _), v in zip(batch, vectors,
                                                                                               strict=True)])
                self.error = None
            except Exception as exc:  # noqa: BLE001 - word search still works; retried
                self.error = f"{type(exc).__name__}: {exc}"
                log.warning("embedding document chunks failed (retrying in %gs): %s", RETRY_AFTER, self.error)
                await anyio.sleep(RETRY_AFTER)
