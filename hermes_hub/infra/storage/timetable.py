"""The rows of schedules and their occurrences (issue 24), shared by both backends' SQL.

A schedule is one person's task with its timing; an occurrence is one due time of it, from ``pending``
through ``running`` (held under a lease) to ``done``, ``failed`` or ``missed``. The finished ones are the
person's inbox. Times are seconds since the epoch on the scheduler's clock (``due_at``, ``fire_at``,
``finished_at``); a lease (``claimed_until``) is on the store's own clock, as the job queues' are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from hermes_hub.infra.errors import NotFound

SCHEDULE_COLS = ("id, user_id, role, task, kind, spec, timezone, profile, session_id, misfire_grace, jitter, "
                 "retries, notify, state, next_due, created_at, updated_at")
OCCURRENCE_COLS = ("o.id, o.schedule_id, o.user_id, o.due_at, o.fire_at, o.state, o.attempts, o.owner, "
                   "o.finished_at, o.run_id, o.session_id, o.answer, o.stop_reason, o.error, o.missed, s.task")
FINISHED = ("done", "failed", "missed")


@dataclass(frozen=True)
class ScheduleRecord:
    schedule_id: str
    user_id: str
    role: str  # the creator's role when it was made: runs get no more than that
    task: str
    kind: str  # "at" | "every" | "cron"
    spec: str  # an ISO time, a number of seconds, or a five-field cron expression
    timezone: str
    profile: str
    session_id: str | None  # where its runs go (made on the first run when None)
    misfire_grace: float | None  # None: the hub's ``schedules.misfire_grace``
    jitter: float | None
    retries: int | None
    notify: str | None  # a webhook URL for this schedule's occurrences
    state: str  # "active" | "paused" | "done" (a one-off that fired)
    next_due: float | None
    created_at: float
    updated_at: float

    def values(self) -> tuple[Any, ...]:
        return (self.schedule_id, self.user_id, self.role, self.task, self.kind, self.spec, self.timezone,
                self.profile, self.session_id, self.misfire_grace, self.jitter, self.retries, self.notify,
                self.state, self.next_due, self.created_at, self.updated_at)


@dataclass(frozen=True)
class OccurrenceRecord:
    occurrence_id: int
    schedule_id: str
    user_id: str
    due_at: float
    fire_at: float  # due_at plus the schedule's jitter
    state: str  # "pending" | "running" | "done" | "failed" | "missed"
    attempts: int
    owner: str | None
    finished_at: float | None
    run_id: str | None  # the agent run's trace
    session_id: str | None
    answer: str | None
    stop_reason: str | None
    error: str | None
    missed: int  # due times folded into this one (a hub down for a while)
    task: str = ""


@dataclass(frozen=True)
class Planned:
    """One occurrence a planning step adds: (due, fire, state, missed); ``missed`` ones are finished at once."""

    due_at: float
    fire_at: float
    state: str
    missed: int = 0
    error: str | None = None


def schedule_record(row: Any) -> ScheduleRecord:
    r = tuple(row)
    return ScheduleRecord(*r[:11], None if r[11] is None else int(r[11]), *r[12:])


def occurrence_record(row: Any) -> OccurrenceRecord:
    r = tuple(row)
    return OccurrenceRecord(int(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), *r[7:14], int(r[14]), r[15] or "")


def schedule_not_found(schedule_id: str) -> NotFound:
    return NotFound("schedule", schedule_id, "hermes_schedule_list shows your schedules")


class ScheduleStore(Protocol):
    """Schedules and their occurrences (``storage.timetable``); a person's reads filter by their user id and
    another user's schedule id raises the ``NotFound`` of a missing one."""

    async def add_schedule(self, record: ScheduleRecord) -> None: ...

    async def get_schedule(self, user_id: str, schedule_id: str) -> ScheduleRecord: ...

    async def list_schedules(self, user_id: str | None, *, limit: int = 1000) -> list[ScheduleRecord]:
        """The user's schedules, oldest first (None: everyone's, for the status page and the CLI)."""

    async def update_schedule(self, record: ScheduleRecord) -> None: ...

    async def set_schedule_session(self, schedule_id: str, session_id: str) -> None:
        """Give a schedule the session its first run made (unless it has one)."""

    async def delete_schedule(self, user_id: str, schedule_id: str) -> bool: ...

    async def due_schedules(self, now: float, *, limit: int = 500) -> list[ScheduleRecord]:
        """Active schedules whose ``next_due`` is at or before ``now``, soonest first."""

    async def plan_schedule(self, schedule_id: str, seen_due: float, next_due: float | None, state: str,
                            planned: list[Planned], now: float) -> bool:
        """Move ``next_due`` from ``seen_due`` and add ``planned``, at most once per due time across replicas."""

    async def claim_occurrence(self, owner: str, now: float, *, lease: float) -> OccurrenceRecord | None:
        """The oldest occurrence ready at ``now`` (or whose lease ran out), held by ``owner`` for ``lease`` s."""

    async def renew_occurrence(self, occurrence_id: int, owner: str, *, lease: float) -> bool: ...

    async def finish_occurrence(self, occurrence_id: int, owner: str, state: str, fields: dict[str, Any], now: float,
                                *, retry_at: float | None = None, again: bool = False) -> bool:
        """End it as ``state`` (or back to pending until ``retry_at``; ``again``: that attempt does not count);
        False if ``owner`` no longer holds it."""

    async def occurrences(self, user_id: str, *, schedule_id: str | None = None, finished: bool = False,
                          limit: int = 50) -> list[OccurrenceRecord]:
        """Newest first; ``finished``: the inbox (done, failed, missed) by when each ended."""

    async def schedule_counts(self) -> dict[str, int]: ...
