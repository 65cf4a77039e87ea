"""The ``ApprovalStore`` part of both backends (``hermes_hub.infra.storage.approvals``)."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.approvals import ApprovalRecord
from hermes_hub.infra.storage.crud.runner import Runner


class ApprovalMethods(Runner):
    async def add_approval(self, record: ApprovalRecord) -> None:
        await self._write(self._sql.approvals.add_approval, record)

    async def get_approval(self, approval_id: str) -> ApprovalRecord | None:
        return await self._read(self._sql.approvals.get_approval, approval_id)

    async def decide_approval(self, approval_id: str, user_id: str, role: str, state: str, *, by: str, via: str,
                              at: datetime) -> ApprovalRecord | None:
        return await self._write(self._sql.approvals.decide_approval, approval_id, user_id, role, state, by, via, at)

    async def use_approval(self, user_id: str, role: str, tool: str, digest: str, at: datetime,
                           approval_id: str | None = None) -> ApprovalRecord | None:
        return await self._write(self._sql.approvals.use_approval, user_id, role, tool, digest, at, approval_id)

    async def list_approvals(self, user_id: str, role: str, *, pending_at: datetime | None = None,
                             limit: int = 50) -> list[ApprovalRecord]:
        return await self._read(self._sql.approvals.list_approvals, user_id, role, pending_at, limit)
