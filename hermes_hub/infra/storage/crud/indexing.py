"""The parts of ``IndexerStore`` both backends share. Which rows a batch holds (``unindexed``,
``unindexed_messages``, ``renew_index_claim``) differs: PostgreSQL replicas claim batches with a lease,
one SQLite process reads them; each store keeps those three."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_hub.infra.storage.crud.runner import Runner


class IndexMethods(Runner):
    async def pending_index(self, source: str, mark: str) -> int:
        return await self._read(self._sql.indexing.pending, source, mark)

    async def index_message_terms(self, rows: Sequence[tuple[int, str, str]], *, mark: str, last_pk: int,
                                  owner: str | None = None) -> bool:
        return await self._write(self._sql.indexing.index_message_terms, list(rows), mark, last_pk, owner)

    async def reset_message_terms(self, mark: str) -> None:
        await self._write(self._sql.indexing.reset_message_terms, mark)

    async def ensure_vector_table(self, source: str, embedder: str, dims: int) -> str:
        return await self._write(self._sql.vectors.ensure_vector_table, source, embedder, dims)

    async def add_vectors(self, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], *, mark: str,
                          last_pk: int, owner: str | None = None) -> bool:
        return await self._write(self._sql.vectors.add_vectors, table, list(rows), mark, last_pk, owner)

    async def drop_vector_tables(self, embedder: str | None = None) -> list[str]:
        return await self._write(self._sql.vectors.drop_vector_tables, embedder)
