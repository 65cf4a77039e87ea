"""What the store keeps of documents: each document, its chunks (text, heading path, position), a word
index over them and one vector per chunk; and the ``DocumentStore`` protocol both backends satisfy.

A document belongs to the user who added it; ``shared`` ones (an admin adds them) are read by everyone.
Every read takes the caller's user id and sees only the caller's own documents and the shared ones;
another user's document id raises the ``NotFound`` of one that never existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from hermes_hub.infra.errors import NotFound
from hermes_hub.infra.storage.records import RankedRow

DOCUMENT_HINT = "list your documents with hermes_docs_list"
HEADING_SEP = " > "


def document_not_found(document_id: str) -> NotFound:
    return NotFound("document", document_id, DOCUMENT_HINT)


@dataclass(frozen=True)
class DocumentRecord:
    id: str
    user_id: str  # who added it
    shared: bool  # read by every user (added by an admin)
    title: str
    origin: str  # "text", a file path or a URL
    format: str
    chars: int
    chunks: int
    created_at: datetime
    text: str = ""  # filled by get_document only


@dataclass(frozen=True)
class ChunkRow:
    """One chunk to store, or a chunk found (then with its document's id and title)."""

    position: int
    heading: tuple[str, ...]
    text: str
    document_id: str = ""
    title: str = ""


class DocumentStore(Protocol):
    async def add_document(self, record: DocumentRecord, chunks: list[ChunkRow]) -> None:
        """The document, its chunks and their word index, in one transaction."""

    async def list_documents(self, user_id: str, limit: int,
                             before_pk: int | None) -> list[tuple[int, DocumentRecord]]:
        """The caller's documents and the shared ones, newest first."""

    async def get_document(self, user_id: str, document_id: str) -> DocumentRecord: ...

    async def delete_documents(self, user_id: str, document_id: str | None, *, admin: bool) -> int:
        """Forget one document (the caller's own, or a shared one if ``admin``) or all the caller added,
        with every chunk, index entry and vector; return how many."""

    async def chunk_lexical(self, user_id: str, match: str, limit: int) -> list[RankedRow]:
        """Chunks the caller may read matching an FTS5-style ``"a" OR "b"`` expression, best first."""

    async def chunks_by_pk(self, user_id: str, pks: list[int]) -> dict[int, ChunkRow]: ...

    async def chunk_vectors(self, user_id: str, embedder: str, after_pk: int) -> list[tuple[int, bytes]]:
        """(pk, float32 bytes) of the chunks the caller may read that ``embedder`` embedded, pk > after_pk."""

    async def chunk_generation(self, user_id: str, embedder: str) -> tuple[int, int]:
        """(count, highest pk) of those vectors: when it moves, a cached copy is stale."""

    async def unembedded_chunks(self, embedder: str, limit: int) -> list[tuple[int, str]]:
        """(pk, heading path and text) of chunks without a vector of ``embedder``, oldest first."""

    async def set_chunk_vectors(self, embedder: str, rows: list[tuple[int, bytes]]) -> None: ...

    async def document_counts(self, user_id: str | None) -> dict[str, int]:
        """``{"documents", "chunks", "unembedded"}`` the caller may read (None: everyone's)."""
