"""A person's schedules: made, listed, changed and removed with their arguments checked first; what the
``hermes_schedule_*`` tools, the status page and ``hermes-hub schedules`` call. Another user's schedule id
answers "not found", like one that never existed."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from hermes_hub.core.agent.profiles import resolve
from hermes_hub.infra.call import Identity
from hermes_hub.infra.config import HubConfig
from hermes_hub.infra.errors import InvalidInput
from hermes_hub.core.schedules.clock import Clock
from hermes_hub.core.schedules.inbox import entry
from hermes_hub.core.schedules.timing import Timing, zone
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.timetable import ScheduleRecord

TIMINGS = ("at", "every", "cron")
OVERRIDES = ("misfire", "jitter", "retries")
INBOX_LIMIT = 50
MAX_TASK = 20_000


class Schedules:
    def __init__(self, store: Callable[[], Store], config: Callable[[], HubConfig], clock: Clock,
                 session_exists: Callable[[str, str], Awaitable[object]],
                 trace_uri: Callable[[str], str] = lambda run_id: run_id) -> None:
        self.store, self.config, self.clock = store, config, clock
        self.changed: Callable[[], None] = lambda: None  # the local scheduler's wake: a new time may be sooner
        self.session_exists = session_exists  # raises NotFound for another user's or a missing session
        self.trace_uri = trace_uri

    async def create(self, caller: Identity, args: dict[str, Any]) -> dict[str, Any]:
        task = _task(args.get("task"))
        timing = self._timing(args, args.get("timezone") or self._zone())
        profile = str(args.get("profile") or "default")
        resolve(self.config(), profile)  # an unknown profile is refused now, not at ten tomorrow
        if args.get("session_id"):
            await self.session_exists(caller.user_id, str(args["session_id"]))
        mine = await self.store().list_schedules(caller.user_id, limit=self.config().schedules.max_per_user + 1)
        if len(mine) >= self.config().schedules.max_per_user:
            raise InvalidInput(f"you have {len(mine)} schedules, the most schedules.max_per_user allows; delete one "
                               f"with hermes_schedule_delete first")
        now = self.clock.now()
        sid = "sch_" + secrets.token_urlsafe(12)
        first = timing.first(now, now)
        if first is None:
            raise InvalidInput(f"at {args.get('at')!r} is in the past (it is {_local(now, timing.timezone)} now); "
                               f"give a time still to come")
        misfire, jitter, retries = _overrides(args)
        record = ScheduleRecord(sid, caller.user_id, caller.role, task, timing.kind, timing.spec, timing.timezone,
                                profile, args.get("session_id"), misfire, jitter, retries, None, "active", first,
                                now, now)
        await self.store().add_schedule(record)
        self.changed()
        return await self.view(record)

    async def list(self, caller: Identity) -> list[dict[str, Any]]:
        return [await self.view(s) for s in await self.store().list_schedules(caller.user_id)]

    async def get(self, caller: Identity, schedule_id: str, runs: int = 10) -> dict[str, Any]:
        s = await self.store().get_schedule(caller.user_id, schedule_id)
        recent = await self.store().occurrences(caller.user_id, schedule_id=schedule_id, limit=runs)
        return {**await self.view(s), "runs": [entry(o, self.trace_uri) for o in recent]}

    async def update(self, caller: Identity, schedule_id: str, args: dict[str, Any]) -> dict[str, Any]:
        s = await self.store().get_schedule(caller.user_id, schedule_id)
        changes: dict[str, Any] = {}
        if "task" in args:
            changes["task"] = _task(args["task"])
        if "profile" in args:
            resolve(self.config(), str(args["profile"]))
            changes["profile"] = str(args["profile"])
        if args.get("session_id"):
            await self.session_exists(caller.user_id, str(args["session_id"]))
            changes["session_id"] = str(args["session_id"])
        misfire, jitter, retries = _overrides(args)
        changes.update({k: v for k, v in (("misfire_grace", misfire), ("jitter", jitter), ("retries", retries))
                        if k.split("_")[0] in args or k in args})
        now = self.clock.now()
        retimed = any(k in args for k in (*TIMINGS, "timezone"))
        if retimed:
            given = {k: args[k] for k in TIMINGS if k in args} or {s.kind: s.spec}
            timing = self._timing(given, args.get("timezone") or s.timezone)
            changes.update(kind=timing.kind, spec=timing.spec, timezone=timing.timezone)
        state = s.state
        if "paused" in args:
            state = "paused" if args["paused"] else "active"
        if retimed or (state == "active" and s.state != "active"):
            timing = Timing(changes.get("kind", s.kind), changes.get("spec", s.spec),
                            changes.get("timezone", s.timezone))
            nxt = timing.first(now, now if retimed else s.created_at)
            if nxt is None:
                raise InvalidInput(f"that time is in the past (it is {_local(now, timing.timezone)} now); "
                                   f"give one to come")
            changes["next_due"] = nxt
        if state == "active" and s.state == "done" and "next_due" not in changes:
            raise InvalidInput("this one-off schedule has fired; give it a new 'at' to run again")
        record = ScheduleRecord(**{**s.__dict__, **changes, "state": state, "updated_at": now})
        await self.store().update_schedule(record)
        self.changed()
        return await self.view(record)

    async def delete(self, caller: Identity, schedule_id: str) -> dict[str, Any]:
        await self.store().get_schedule(caller.user_id, schedule_id)  # NotFound names it
        await self.store().delete_schedule(caller.user_id, schedule_id)
        return {"deleted": schedule_id}

    async def inbox(self, caller: Identity, limit: int = INBOX_LIMIT) -> list[dict[str, Any]]:
        found = await self.store().occurrences(caller.user_id, finished=True, limit=limit)
        return [entry(o, self.trace_uri) for o in found]

    async def view(self, s: ScheduleRecord) -> dict[str, Any]:
        last = await self.store().occurrences(s.user_id, schedule_id=s.schedule_id, finished=True, limit=1)
        return {"schedule_id": s.schedule_id, "task": s.task, s.kind: _spec(s), "timezone": s.timezone,
                "profile": s.profile, "session_id": s.session_id, "state": s.state,
                "next_run": None if s.next_due is None or s.state != "active" else _local(s.next_due, s.timezone),
                "last_run": ({"state": last[0].state, "at": _local(last[0].finished_at or last[0].due_at, s.timezone),
                              "error": last[0].error} if last else None),
                "misfire": s.misfire_grace, "jitter": s.jitter, "retries": s.retries}

    def _zone(self) -> str:
        return self.config().agent.timezone or "UTC"

    @staticmethod
    def _timing(args: dict[str, Any], tz: str) -> Timing:
        given = [k for k in TIMINGS if args.get(k) not in (None, "")]
        if len(given) != 1:
            raise InvalidInput("give exactly one of 'at' (an ISO time, e.g. 2026-12-02T10:00:00+01:00), 'every' (an "
                               "interval, e.g. '1h') or 'cron' (five fields, e.g. '30 8 * * 1-5')"
                               + (f"; got {', '.join(given)}" if given else ""))
        return Timing.of(given[0], args[given[0]], tz)


def _task(value: Any) -> str:
    text = str(value or "").strip()
    if not text or len(text) > MAX_TASK:
        raise InvalidInput(f"task must be 1 to {MAX_TASK:,} characters: what the agent should do when it is due")
    return text


def _overrides(args: dict[str, Any]) -> tuple[float | None, float | None, int | None]:
    def number(key: str, most: float) -> float | None:
        v = args.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= most:
            raise InvalidInput(f"{key} must be a number of seconds from 0 to {most:g}")
        return float(v)

    retries = number("retries", 10)
    return number("misfire", 30 * 86400), number("jitter", 3600), None if retries is None else int(retries)


def _spec(s: ScheduleRecord) -> Any:
    return float(s.spec) if s.kind == "every" else s.spec


def _local(t: float, tz: str) -> str:
    return datetime.fromtimestamp(t, zone(tz)).isoformat(timespec="seconds")
