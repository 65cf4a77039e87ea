"""The ``ScheduleStore`` part of both backends: schedules, their occurrences under leases, the inbox."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.timetable import OccurrenceRecord, Planned, ScheduleRecord


class ScheduleMethods(Runner):
    async def add_schedule(self, record: ScheduleRecord) -> None:
        await self._write(self._sql.schedules.add_schedule, record)

    async def get_schedule(self, user_id: str, schedule_id: str) -> ScheduleRecord:
        return await self._read(self._sql.schedules.get_schedule, user_id, schedule_id)

    async def list_schedules(self, user_id: str | None, *, limit: int = 1000) -> list[ScheduleRecord]:
        return await self._read(self._sql.schedules.list_schedules, user_id, limit)

    async def update_schedule(self, record: ScheduleRecord) -> None:
        await self._write(self._sql.schedules.update_schedule, record)

    async def set_schedule_session(self, schedule_id: str, session_id: str) -> None:
        await self._write(self._sql.schedules.set_session, schedule_id, session_id)

    async def delete_schedule(self, user_id: str, schedule_id: str) -> bool:
        return await self._write(self._sql.schedules.delete_schedule, user_id, schedule_id)

    async def due_schedules(self, now: float, *, limit: int = 500) -> list[ScheduleRecord]:
        return await self._read(self._sql.schedules.due_schedules, now, limit)

    async def plan_schedule(self, schedule_id: str, seen_due: float, next_due: float | None, state: str,
                            planned: list[Planned], now: float) -> bool:
        return await self._write(self._sql.schedules.plan, schedule_id, seen_due, next_due, state, planned, now)

    async def claim_occurrence(self, owner: str, now: float, *, lease: float) -> OccurrenceRecord | None:
        return await self._write(self._sql.schedules.claim, owner, now, lease)

    async def renew_occurrence(self, occurrence_id: int, owner: str, *, lease: float) -> bool:
        return await self._write(self._sql.schedules.renew, occurrence_id, owner, lease)

    async def finish_occurrence(self, occurrence_id: int, owner: str, state: str, fields: dict[str, Any], now: float,
                                *, retry_at: float | None = None, again: bool = False) -> bool:
        return await self._write(self._sql.schedules.finish, occurrence_id, owner, state, fields, now, retry_at, again)

    async def occurrences(self, user_id: str, *, schedule_id: str | None = None, finished: bool = False,
                          limit: int = 50) -> list[OccurrenceRecord]:
        return await self._read(self._sql.schedules.occurrences, user_id, schedule_id, finished, limit)

    async def schedule_counts(self) -> dict[str, int]:
        return await self._read(self._sql.schedules.schedule_counts)
