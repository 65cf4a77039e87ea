"""An occurrence as an agent run: the schedule's task and profile, as the person who made it (no more than
the role they had then, and no more than they have now), in the schedule's session, leaving a trace."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from hermes_hub.agent.loop import Agent
from hermes_hub.agent.profiles import resolve
from hermes_hub.call import ADMIN, CallContext, Identity
from hermes_hub.config import HubConfig
from hermes_hub.schedules.scheduler import FAILED_STOPS, Fire, RunFailed
from hermes_hub.schedules.timing import zone
from hermes_hub.sessions import Sessions
from hermes_hub.storage import Store
from hermes_hub.storage.timetable import OccurrenceRecord, ScheduleRecord


def occurrence_task(s: ScheduleRecord, o: OccurrenceRecord) -> str:
    """What the model reads: the task, said to be due now, so it is done and not scheduled again."""
    when = datetime.fromtimestamp(o.due_at, zone(s.timezone)).isoformat(timespec="minutes")
    return (f"[scheduled run of {s.schedule_id}, due {when} {s.timezone}] The person asked for this to happen now; "
            f"do it now (it is already scheduled, do not schedule it again) and answer them directly:\n{s.task}")


def agent_fire(agent: Callable[[], Agent], config: Callable[[], HubConfig], sessions: Callable[[], Sessions],
               store: Callable[[], Store], role_now: Callable[[str], str | None]) -> Fire:
    """``role_now(user)``: the role hub.json gives that user today (None: not known there, the stored one holds)."""
    async def fire(s: ScheduleRecord, o: OccurrenceRecord) -> dict[str, Any]:
        current = role_now(s.user_id)
        role = s.role if current is None or (current == ADMIN and s.role == ADMIN) else "user"
        profile = resolve(config(), s.profile)
        session_id = s.session_id
        if session_id is None:  # the schedule's own session, made on its first run (the first replica's wins)
            made = await sessions().create(s.user_id, f"Schedule: {s.task[:60]}")
            await store().set_schedule_session(s.schedule_id, made.session_id)
            session_id = (await store().get_schedule(s.user_id, s.schedule_id)).session_id
        result = await agent().run(occurrence_task(s, o), profile, CallContext(Identity(s.user_id, role)),
                                   session_id=session_id)
        fields = {"run_id": result.run_id, "session_id": result.session_id, "answer": result.answer,
                  "stop_reason": result.stop_reason}
        if result.stop_reason in FAILED_STOPS:
            raise RunFailed(f"the agent's run ended with {result.stop_reason}: {result.answer[:500]}", fields)
        return fields

    return fire
