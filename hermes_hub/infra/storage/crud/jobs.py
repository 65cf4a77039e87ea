"""The ``ExtractionQueue`` and ``SummaryQueue`` parts of both backends: durable jobs with leases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import ExtractionJob, MemoryEvent, MemoryRecord, SummaryJob


class ExtractionMethods(Runner):
    async def schedule_extraction(self, limit: int = 1000) -> int:
        return await self._write(self._sql.jobs.schedule, limit)

    async def claim_extraction(self, owner: str, *, lease: float) -> ExtractionJob | None:
        return await self._write(self._sql.jobs.claim, owner, lease)

    async def renew_extraction(self, job_id: int, owner: str, *, lease: float) -> bool:
        return await self._write(self._sql.jobs.renew, job_id, owner, lease)

    async def extraction_messages(self, job: ExtractionJob, *, context: int) -> list[tuple[Any, ...]]:
        return await self._read(self._sql.jobs.job_messages, job, context)

    async def finish_extraction(self, job_id: int, owner: str,
                                writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
                                events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
        return await self._write(self._sql.jobs.finish, job_id, owner, list(writes), list(events), result)

    async def fail_extraction(self, job_id: int, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._write(self._sql.jobs.fail, job_id, owner, error, retry_in)

    async def extraction_counts(self) -> dict[str, int]:
        return await self._read(self._sql.jobs.counts)


class SummaryMethods(Runner):
    async def request_summary(self, user_id: str, session_id: str, upto_seq: int, *, min_new: int = 1) -> bool:
        return await self._write(self._sql.summaries.request_summary, user_id, session_id, upto_seq, min_new)

    async def claim_summary(self, owner: str, *, lease: float) -> SummaryJob | None:
        return await self._write(self._sql.summaries.claim_summary, owner, lease)

    async def renew_summary(self, session_id: str, owner: str, *, lease: float) -> bool:
        return await self._write(self._sql.summaries.renew_summary, session_id, owner, lease)

    async def finish_summary(self, session_id: str, owner: str, summary: str) -> bool:
        return await self._write(self._sql.summaries.finish_summary, session_id, owner, summary)

    async def fail_summary(self, session_id: str, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._write(self._sql.summaries.fail_summary, session_id, owner, error, retry_in)

    async def summary_counts(self) -> dict[str, int]:
        return await self._read(self._sql.summaries.summary_counts)
