"""The ``SealedStore`` part of both backends: secrets sealed by ``hermes_hub.services.vault``, by user, kind and name."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import SealedRecord


class SealedMethods(Runner):
    async def put_sealed(self, record: SealedRecord) -> None:
        await self._write(self._sql.sealed.put_sealed, record)

    async def get_sealed(self, user_id: str, kind: str, name: str) -> SealedRecord | None:
        return await self._read(self._sql.sealed.get_sealed, user_id, kind, name)

    async def delete_sealed(self, user_id: str, kind: str, name: str) -> bool:
        return await self._write(self._sql.sealed.delete_sealed, user_id, kind, name)

    async def list_sealed(self, user_id: str | None = None, kind: str | None = None) -> list[SealedRecord]:
        return await self._read(self._sql.sealed.list_sealed, user_id, kind)

    async def sealed_owners(self, kind: str, name: str) -> list[str]:
        """Who holds a value of ``kind`` named ``name``, without reading any value (guards.mask originals)."""
        return await self._read(self._sql.sealed.sealed_owners, kind, name)

    async def prune_sealed(self, kind: str, before: datetime) -> int:
        """Delete the values of ``kind`` last set before ``before``; return how many went."""
        return await self._write(self._sql.sealed.prune_sealed, kind, before.timestamp())
