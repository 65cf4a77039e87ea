"""The ``RunStore`` part of both backends: agent runs and their traces."""

from __future__ import annotations

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import RunRecord


class RunMethods(Runner):
    async def add_run(self, record: RunRecord) -> None:
        await self._write(self._sql.runs.add_run, record)

    async def get_run(self, user_id: str, run_id: str) -> RunRecord:
        return await self._read(self._sql.runs.get_run, user_id, run_id)

    async def list_runs(self, user_id: str, *, limit: int = 20) -> list[RunRecord]:
        return await self._read(self._sql.runs.list_runs, user_id, limit)

    async def rate_run(self, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
        return await self._write(self._sql.runs.rate_run, user_id, run_id, rating, comment)
