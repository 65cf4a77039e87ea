"""The ``DocumentStore`` part of both backends (``storage.documents``): documents, chunks, their index."""

from __future__ import annotations

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.documents import ChunkRow, DocumentRecord
from hermes_hub.infra.storage.records import RankedRow


class DocumentMethods(Runner):
    async def add_document(self, record: DocumentRecord, chunks: list[ChunkRow]) -> None:
        await self._write(self._sql.documents.add_document, record, chunks)

    async def list_documents(self, user_id: str, limit: int,
                             before_pk: int | None) -> list[tuple[int, DocumentRecord]]:
        return await self._read(self._sql.documents.list_documents, user_id, limit, before_pk)

    async def get_document(self, user_id: str, document_id: str) -> DocumentRecord:
        return await self._read(self._sql.documents.get_document, user_id, document_id)

    async def delete_documents(self, user_id: str, document_id: str | None, *, admin: bool) -> int:
        return await self._write(self._sql.documents.delete_documents, user_id, document_id, admin)

    async def chunk_lexical(self, user_id: str, match: str, limit: int) -> list[RankedRow]:
        return await self._read(self._sql.documents.chunk_lexical, user_id, match, limit)

    async def chunks_by_pk(self, user_id: str, pks: list[int]) -> dict[int, ChunkRow]:
        return await self._read(self._sql.documents.chunks_by_pk, user_id, pks)

    async def chunk_vectors(self, user_id: str, embedder: str, after_pk: int) -> list[tuple[int, bytes]]:
        return await self._read(self._sql.documents.chunk_vectors, user_id, embedder, after_pk)

    async def chunk_generation(self, user_id: str, embedder: str) -> tuple[int, int]:
        return await self._read(self._sql.documents.chunk_generation, user_id, embedder)

    async def unembedded_chunks(self, embedder: str, limit: int) -> list[tuple[int, str]]:
        return await self._read(self._sql.documents.unembedded_chunks, embedder, limit)

    async def set_chunk_vectors(self, embedder: str, rows: list[tuple[int, bytes]]) -> None:
        await self._write(self._sql.documents.set_chunk_vectors, embedder, rows)

    async def document_counts(self, user_id: str | None) -> dict[str, int]:
        return await self._read(self._sql.documents.document_counts, user_id)
