"""A hub that was down when runs were due: on start it runs each late schedule once if within misfire_grace,
and records the rest as missed in the inbox (never silently dropped, never run in a burst)."""

from __future__ import annotations

import pytest

from hermes_hub.core.schedules import ManualClock
from tests.schedules.helpers import call, clocked_hub, inbox, settle, ts, write_config

pytestmark = pytest.mark.anyio


async def test_after_a_restart_late_runs_within_the_grace_run_once_and_older_ones_are_recorded_missed(tmp_path):
    config = write_config(tmp_path, schedules={"jitter": 0})
    clock = ManualClock(ts("2026-12-01T09:00:00+00:00"))
    async with clocked_hub(config, clock) as hub:
        late = await call(hub, "hermes_schedule_create", {"task": "late but fine", "at": "2026-12-01T09:20:00Z"})
        strict = await call(hub, "hermes_schedule_create", {"task": "only on time", "at": "2026-12-01T09:30:00Z",
                                                            "misfire": 60})
        often = await call(hub, "hermes_schedule_create", {"task": "every ten", "every": "10m"})
    clock.set(ts("2026-12-01T10:00:30+00:00"))  # the hub was down for an hour
    async with clocked_hub(config, clock) as hub:
        await settle(hub)
        items = {i["schedule_id"]: i for i in await inbox(hub)}
        assert items[late["schedule_id"]]["state"] == "done"
        assert items[late["schedule_id"]]["due_at"] == "2026-12-01T09:20:00+00:00"
        missed = items[strict["schedule_id"]]
        assert missed["state"] == "missed" and missed["run_id"] is None
        assert "due at 2026-12-01T09:30:00+00:00, when no hub was running" in missed["error"]
        assert "past misfire_grace (60 s)" in missed["error"]
        runs = [i for i in await inbox(hub) if i["schedule_id"] == often["schedule_id"]]
        assert [(r["state"], r["due_at"][11:16], r["missed"]) for r in runs] == [("done", "10:00", 5)]  # once
        assert hub.scheduling.scheduler.stats["missed"] == 1
        listed = {s["schedule_id"]: s for s in (await call(hub, "hermes_schedule_list", {}))["schedules"]}
        assert listed[often["schedule_id"]]["next_run"] == "2026-12-01T10:10:00+00:00"
        assert listed[strict["schedule_id"]]["last_run"]["state"] == "missed"
