"""The ``AuditStore`` part of both backends: one row per tool call or model call."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import AuditRecord


class AuditMethods(Runner):
    async def add_audit(self, record: AuditRecord) -> int:
        return await self._write(self._sql.audit.add_audit, record)

    async def add_audits(self, records: list[AuditRecord]) -> None:
        await self._write(self._sql.audit.add_audits, list(records))

    async def query_audit(self, *, user_id: str | None = None, tool: str | None = None,
                          since: datetime | None = None, limit: int = 100) -> list[AuditRecord]:
        return await self._read(self._sql.audit.query_audit, user_id, tool, since, limit)

    async def audit_days(self, since: datetime, min_days: int, limit: int) -> list[tuple[str, str, int, int]]:
        return await self._read(self._sql.audit.audit_days, since, min_days, limit)

    async def prune_audit(self, before: datetime) -> int:
        return await self._write(self._sql.audit.prune_audit, before)
