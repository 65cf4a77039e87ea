"""The firing loop: plan the occurrences that came due, claim one, run it as its person, tell them.

    scheduler = Scheduler(store, clock, fire, settings=lambda: config.schedules, inbox=inbox)
    await scheduler.drain()          # tests: do everything due at the clock's time, now

Each step (any replica, any number at once) first *plans*: every active schedule whose ``next_due`` has
passed gets its occurrence rows and a new ``next_due``, in one compare-and-set, so a due time is planned
once. Occurrences due while no hub ran fold into one: the newest within ``misfire_grace`` runs, older ones
become one ``missed`` item. Then it *claims* the oldest ready occurrence under a lease (a replica killed
mid-run loses it when the lease runs out, and another takes it over) and runs it; the first to finish it
writes the outcome, so the inbox shows each occurrence once. A failed run is retried with doubling backoff
up to ``retries``, then ``failed``. Every outcome lands in the inbox and the log; ``stats`` counts them.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import anyio

from hermes_hub.infra.config.sections import SchedulesSection
from hermes_hub.infra.errors import NotFound, SessionBusy
from hermes_hub.core.schedules.clock import Clock
from hermes_hub.core.schedules.inbox import Inbox, entry
from hermes_hub.core.schedules.timing import Timing, jitter
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.queue import QueueWorker, while_held
from hermes_hub.infra.storage.timetable import OccurrenceRecord, Planned, ScheduleRecord

log = logging.getLogger("hermes_hub.core.schedules")
Fire = Callable[[ScheduleRecord, OccurrenceRecord], Awaitable[dict[str, Any]]]
MAX_CATCH_UP = 1000  # due times walked when a hub comes back (the rest are skipped to the next one)
MAX_BACKOFF = 3600.0
BUSY_WAIT = 5.0  # seconds before a run whose session is busy tries again (that try does not count as a retry)
IDLE_POLL = 5.0  # seconds between looks when nothing is due sooner (a schedule another replica made)
FAILED_STOPS = ("model_error",)  # stop reasons that mean nothing useful ran


class RunFailed(Exception):
    """The occurrence ran but did not succeed; ``fields`` say what is known (the trace, the stop reason)."""

    def __init__(self, message: str, fields: dict[str, Any]) -> None:
        super().__init__(message)
        self.fields = fields


class RunRefused(RunFailed):
    """The occurrence may not run at all (its person has no live credential): ``failed`` at once, not retried."""


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


class Scheduler(QueueWorker):
    name = "schedules"
    idle_poll = 5.0

    def __init__(self, store: Store, clock: Clock, fire: Fire, *, settings: Callable[[], SchedulesSection],
                 inbox: Inbox, trace_uri: Callable[[str], str] = lambda run_id: run_id) -> None:
        super().__init__()
        self.store, self.clock, self.fire, self.settings, self.inbox = store, clock, fire, settings, inbox
        self.trace_uri = trace_uri
        self.owner = "sched_" + secrets.token_hex(6)
        self.stats: dict[str, int] = {k: 0 for k in ("planned", "fired", "done", "failed", "missed", "retried", "lost",
                                                     "refused")}
        self.latency: list[float] = []  # seconds from each run's due time to its start (the newest 1000)
        self._tg: Any = None
        self._soonest: float | None = None  # the next fire time of an occurrence this replica planned or retries
        clock.listeners.append(self.wake)

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:  # webhooks are delivered beside the loop
            self._tg = tg
            await super().run()

    async def step(self) -> bool:
        now = self.clock.now()
        planned = await self.plan(now)
        occurrence = await self.store.claim_occurrence(self.owner, now, lease=self.settings().lease)
        if occurrence is None:
            if not planned:  # sleep until the next due time known here (another replica's: within idle_poll)
                due = [t for t in (await self.next_due(), self._soonest) if t is not None and t > now]
                self.idle_poll = max(0.05, min(IDLE_POLL, *(t - now for t in due))) if due else IDLE_POLL
            return planned > 0
        await self.handle(occurrence)
        return True

    async def plan(self, now: float) -> int:
        n = 0
        for s in await self.store.due_schedules(now):
            n += await self._plan_one(s, now)
        return n

    async def _plan_one(self, s: ScheduleRecord, now: float) -> int:
        cfg = self.settings()
        timing = Timing(s.kind, s.spec, s.timezone)
        dues: list[float] = []
        t: float | None = s.next_due
        while t is not None and t <= now and len(dues) < MAX_CATCH_UP:
            dues.append(t)
            t = timing.after(t, s.created_at)
        skipped = 0
        if t is not None and t <= now:  # down for longer than MAX_CATCH_UP occurrences: jump ahead
            skipped, t = 1, timing.after(now, s.created_at)
        grace = cfg.misfire_grace if s.misfire_grace is None else s.misfire_grace
        within = [d for d in dues if now - d <= grace]
        beyond = [d for d in dues if now - d > grace]
        planned: list[Planned] = []
        if beyond:
            late = beyond[-1]
            planned.append(Planned(late, late, "missed", len(beyond) + skipped - 1, (
                f"missed: due at {iso(late)}, when no hub was running; it is past misfire_grace ({grace:g} s), so it "
                f"was not run late" + (f" ({len(beyond) + skipped - 1} earlier ones too)" if len(beyond) > 1 else ""))))
        if within:
            due = within[-1]
            most = (cfg.jitter if s.jitter is None else s.jitter) if timing.recurring else 0.0
            planned.append(Planned(due, due + jitter(s.schedule_id, due, most), "pending", len(within) - 1))
            self._soon(planned[-1].fire_at)
        if not await self.store.plan_schedule(s.schedule_id, s.next_due or 0.0, t, "active" if t else "done",
                                              planned, now):
            return 0  # another replica planned it first
        self.stats["planned"] += len(planned)
        if beyond:
            self.stats["missed"] += 1
            log.warning("schedule %s of %s missed its run due at %s (past misfire_grace)", s.schedule_id, s.user_id,
                        iso(beyond[-1]))
            for o in await self.store.occurrences(s.user_id, schedule_id=s.schedule_id, finished=True, limit=1):
                await self._tell(o)
        return len(planned)

    async def handle(self, o: OccurrenceRecord) -> None:
        cfg = self.settings()
        try:
            s = await self.store.get_schedule(o.user_id, o.schedule_id)
        except NotFound:  # deleted meanwhile (its occurrences went with it)
            return
        if s.state == "paused":
            await self._end(o, "missed", {"error": "skipped: the schedule is paused"})
            return
        self.stats["fired"] += 1
        self.latency = [*self.latency[-999:], self.clock.now() - o.due_at]
        try:
            fields = await while_held(lambda: self.store.renew_occurrence(o.occurrence_id, self.owner, lease=cfg.lease),
                                      cfg.lease, lambda: self.fire(s, o))
        except SessionBusy as e:  # the person (or a run that died, until its lock expires) is in that session
            log.info("schedule %s run %d waits for its session (%s)", s.schedule_id, o.occurrence_id, e)
            await self.store.finish_occurrence(o.occurrence_id, self.owner, "pending", {}, self.clock.now(),
                                               retry_at=self.clock.now() + BUSY_WAIT, again=True)
            self._soon(self.clock.now() + BUSY_WAIT)
            return
        except RunRefused as e:
            log.warning("schedule %s of %s: run %d %s", s.schedule_id, s.user_id, o.occurrence_id, e)
            self.stats["refused"] += 1
            await self._end(o, "failed", {**e.fields, "error": str(e)})
            return
        except Exception as e:  # noqa: BLE001 - a failed run is retried or reported, never silent
            fields = getattr(e, "fields", {})
            error = str(e)[:2000] or type(e).__name__
            retries = cfg.retries if s.retries is None else s.retries
            if o.attempts <= retries:
                wait = min(MAX_BACKOFF, cfg.retry_backoff * 2 ** (o.attempts - 1))
                log.warning("schedule %s run %d failed (%s); retry %d of %d in %g s", s.schedule_id,
                            o.occurrence_id, error, o.attempts, retries, wait)
                if await self.store.finish_occurrence(o.occurrence_id, self.owner, "pending",
                                                      {**fields, "error": error}, self.clock.now(),
                                                      retry_at=self.clock.now() + wait):
                    self.stats["retried"] += 1
                    self._soon(self.clock.now() + wait)
                return
            log.error("schedule %s of %s failed after %d attempts: %s", s.schedule_id, s.user_id, o.attempts, error)
            await self._end(o, "failed", {**fields, "error": error})
            return
        await self._end(o, "done", fields)

    async def _end(self, o: OccurrenceRecord, state: str, fields: dict[str, Any]) -> None:
        now = self.clock.now()
        if not await self.store.finish_occurrence(o.occurrence_id, self.owner, state, fields, now):
            self.stats["lost"] += 1  # its lease ran out and another replica finished it: it is in the inbox once
            return
        self.stats[state] += 1
        known = {k: fields.get(k) for k in ("run_id", "session_id", "answer", "stop_reason", "error")}
        await self._tell(replace(o, state=state, owner=None, finished_at=now, **known))

    async def _tell(self, o: OccurrenceRecord) -> None:
        item = entry(o, self.trace_uri)
        if self._tg is not None:
            self._tg.start_soon(self.inbox.arrived, o, item)
        else:
            await self.inbox.arrived(o, item)

    def _soon(self, t: float) -> None:
        now = self.clock.now()
        if self._soonest is None or self._soonest <= now or t < self._soonest:
            self._soonest = t

    async def next_due(self) -> float | None:
        due = await self.store.due_schedules(float("inf"), limit=1)
        return due[0].next_due if due else None
