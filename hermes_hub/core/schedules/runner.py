"""An occurrence as an agent run: the schedule's task and profile, as the person who made it (no more than
the role they had then, and no more than they have now), in the schedule's session, leaving a trace.

The role they have now is the one their live credentials give (``Authenticator.role_now``: hub.json's
tokens and ``hermes-hub token create``'s alike; the local user is always an admin). A person with no live
credential left (every token revoked, or taken out of hub.json) gets the run refused (``RunRefused``):
nothing runs, the audit has a ``schedule_refused`` row, and the inbox a ``failed`` item saying why."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from hermes_hub.core.agent.loop import Agent
from hermes_hub.core.agent.profiles import resolve
from hermes_hub.infra.call import ADMIN, CallContext, Identity
from hermes_hub.infra.config import HubConfig
from hermes_hub.core.schedules.scheduler import FAILED_STOPS, Fire, RunFailed, RunRefused
from hermes_hub.core.schedules.timing import zone
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.timetable import OccurrenceRecord, ScheduleRecord


def occurrence_task(s: ScheduleRecord, o: OccurrenceRecord) -> str:
    """What the model reads: the task, said to be due now, so it is done and not scheduled again."""
    when = datetime.fromtimestamp(o.due_at, zone(s.timezone)).isoformat(timespec="minutes")
    return (f"[scheduled run of {s.schedule_id}, due {when} {s.timezone}] The person asked for this to happen now; "
            f"do it now (it is already scheduled, do not schedule it again) and answer them directly:\n{s.task}")


def refusal(s: ScheduleRecord) -> str:
    return (f"refused: {s.user_id} has no live hub token any more (every one revoked, or taken out of hub.json), "
            f"so nothing runs as them; an admin creates one with `hermes-hub token create {s.user_id}`, and the "
            f"next run goes ahead")


def agent_fire(agent: Callable[[], Agent], config: Callable[[], HubConfig], sessions: Callable[[], Sessions],
               store: Callable[[], Store], role_now: Callable[[str], Awaitable[str | None]],
               audit_action: Callable[[Identity, str, dict[str, Any]], Any] | None = None) -> Fire:
    """``role_now(user)``: the role that user's live credentials give today (None: none is live, the run is
    refused). ``audit_action``: the hub's, for the ``schedule_refused`` row."""
    async def fire(s: ScheduleRecord, o: OccurrenceRecord) -> dict[str, Any]:
        current = await role_now(s.user_id)
        if current is None:
            why = refusal(s)
            if audit_action is not None:
                async with audit_action(Identity(s.user_id, "user"), "schedule_refused",
                                        {"schedule_id": s.schedule_id, "occurrence_id": o.occurrence_id}) as rec:
                    rec.refused(why)
            raise RunRefused(why, {"stop_reason": "refused"})
        role = ADMIN if current == ADMIN and s.role == ADMIN else "user"
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
