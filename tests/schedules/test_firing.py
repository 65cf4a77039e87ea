"""Schedules fire at their time on a clock the test moves: a one-off, an interval, a cron across Berlin's DST
change, retries with backoff, people kept apart, bad arguments refused with state intact."""

from __future__ import annotations

import anyio
import pytest

from hermes_hub.infra.call import Identity
from hermes_hub.core.schedules import ManualClock
from hermes_hub.app.web.view import view
from tests.support import until
from tests.schedules.helpers import call, clocked_hub, inbox, refused, settle, ts, write_config

pytestmark = pytest.mark.anyio
START = "2026-12-01T09:00:00+01:00"


async def test_a_one_off_fires_at_its_minute_into_the_inbox_with_its_answer_and_trace_and_not_before(tmp_path):
    clock = ManualClock(ts(START))
    async with clocked_hub(write_config(tmp_path), clock) as hub:
        made = await call(hub, "hermes_schedule_create", {"task": "remind me to bring the plan",
                                                          "at": "2026-12-01T10:00:00+01:00"})
        assert made["next_run"] == "2026-12-01T09:00:00+00:00" and made["state"] == "active"  # agent.timezone: UTC
        clock.set(ts("2026-12-01T09:59:59+01:00"))
        await settle(hub)
        assert await inbox(hub) == []
        clock.set(ts("2026-12-01T10:00:00+01:00"))
        await settle(hub)
        [item] = await inbox(hub)
        assert (item["state"], item["answer"], item["stop_reason"]) == ("done", "Done at its time.", "answered")
        assert item["due_at"] == "2026-12-01T09:00:00+00:00" and item["trace"] == f"hub://hermes/traces/{item['run_id']}"
        trace = await hub.store.get_run("ana", item["run_id"])  # a run like any other, as the person, in its session
        assert trace.session_id == item["session_id"] and "remind me to bring the plan" in trace.task
        got = await call(hub, "hermes_schedule_get", {"schedule_id": made["schedule_id"]})
        assert got["state"] == "done" and got["next_run"] is None and got["last_run"]["state"] == "done"
        clock.advance(86400)
        await settle(hub)
        assert len(await inbox(hub)) == 1  # a one-off runs once
        assert hub.scheduling.scheduler.stats["done"] == 1


async def test_an_interval_fires_every_time_in_its_own_session_newest_first_in_the_inbox(tmp_path):
    clock = ManualClock(ts(START))
    async with clocked_hub(write_config(tmp_path, schedules={"jitter": 0}), clock) as hub:
        made = await call(hub, "hermes_schedule_create", {"task": "check the build", "every": "1h"})
        for _ in range(3):
            clock.advance(3600)
            await settle(hub)
        items = await inbox(hub)
        assert [i["due_at"][11:16] for i in items] == ["11:00", "10:00", "09:00"]  # UTC, newest first
        assert len({i["session_id"] for i in items}) == 1  # the schedule's own session
        listed = await call(hub, "hermes_schedule_list", {})
        assert listed["schedules"][0]["next_run"] == "2026-12-01T12:00:00+00:00"
        paused = await call(hub, "hermes_schedule_update", {"schedule_id": made["schedule_id"], "paused": True})
        assert paused["state"] == "paused" and paused["next_run"] is None
        clock.advance(7200)
        await settle(hub)
        assert len(await inbox(hub)) == 3


async def test_a_cron_in_berlin_runs_once_a_night_across_the_spring_change(tmp_path):
    clock = ManualClock(ts("2026-03-28T12:00:00+01:00"))
    async with clocked_hub(write_config(tmp_path, schedules={"jitter": 0}), clock) as hub:
        await call(hub, "hermes_schedule_create", {"task": "nightly", "cron": "30 2 * * *", "timezone": "Europe/Berlin"})
        for _ in range(3):
            clock.advance(86400)
            await settle(hub)
        due = sorted(i["due_at"] for i in await inbox(hub))
        assert due == ["2026-03-29T01:00:00+00:00",  # 03:00 CEST: 02:30 did not exist that night
                       "2026-03-30T00:30:00+00:00", "2026-03-31T00:30:00+00:00"]


async def test_recurring_runs_start_within_the_jitter_after_their_due_time(tmp_path):
    clock = ManualClock(ts(START))
    async with clocked_hub(write_config(tmp_path, schedules={"jitter": 30}), clock) as hub:
        for i in range(5):
            await call(hub, "hermes_schedule_create", {"task": f"job {i}", "cron": "30 8 * * *",
                                                       "timezone": "Europe/Berlin"})
        clock.set(ts("2026-12-02T08:30:00+01:00"))
        await settle(hub)
        assert await inbox(hub) == []  # planned, each waiting for its jitter
        clock.advance(30)
        await settle(hub)
        items = await inbox(hub)
        spread = [ts(i["fired_at"]) - ts(i["due_at"]) for i in items]
        assert len(items) == 5 and all(0 <= s < 30 for s in spread) and len({round(s, 3) for s in spread}) == 5


async def test_a_failing_run_is_retried_with_backoff_then_marked_failed_with_its_error(tmp_path):
    clock = ManualClock(ts(START))
    rules = [{"when": r"^\[scheduled run of", "tool_calls": [{"name": "nope_missing", "arguments": {}}]}]
    config = write_config(tmp_path, rules, schedules={"retries": 2, "retry_backoff": 60})
    async with clocked_hub(config, clock) as hub:
        await call(hub, "hermes_schedule_create", {"task": "will fail", "at": "2026-12-01T09:30:00+01:00"})
        clock.set(ts("2026-12-01T09:30:00+01:00"))
        await settle(hub)  # the scripted model has no rule for the tool's error: the run fails
        assert await inbox(hub) == [] and hub.scheduling.scheduler.stats["retried"] == 1
        clock.advance(59)
        await settle(hub)
        assert hub.scheduling.scheduler.stats["retried"] == 1  # backoff: not yet
        clock.advance(1)
        await settle(hub)
        clock.advance(120)  # the second retry waits twice as long
        await settle(hub)
        [item] = await inbox(hub)
        assert item["state"] == "failed" and item["attempts"] == 3 and item["error"]
        assert hub.scheduling.scheduler.stats == {**hub.scheduling.scheduler.stats, "failed": 1, "retried": 2}
        [shown] = (await view(hub, Identity("ana", "admin")))["schedules"]  # the status page, never silent
        assert shown["last_run"]["state"] == "failed" and "Unknown tool 'nope_missing'" in shown["last_run"]["error"]


async def test_another_user_never_sees_changes_or_runs_someone_s_schedule(tmp_path):
    clock = ManualClock(ts(START))
    async with clocked_hub(write_config(tmp_path, schedules={"jitter": 0}), clock) as hub:
        mine = await call(hub, "hermes_schedule_create", {"task": "ana's", "every": "1h"}, user="ana", role="user")
        sid = mine["schedule_id"]
        for tool, args in [("hermes_schedule_get", {}), ("hermes_schedule_delete", {}),
                           ("hermes_schedule_update", {"task": "bob's now"})]:
            said = await refused(hub, tool, {"schedule_id": sid, **args}, user="bob", role="user")
            assert said == f"schedule '{sid}' not found; hermes_schedule_list shows your schedules"
        assert (await call(hub, "hermes_schedule_list", {}, user="bob", role="user"))["schedules"] == []
        clock.advance(3600)
        await settle(hub)
        [item] = await inbox(hub, "ana")
        assert await inbox(hub, "bob") == []
        run = await hub.store.get_run("ana", item["run_id"])
        assert run.task.endswith("ana's")  # it ran as ana, unchanged by bob
        assert (await hub.scheduling.book.get(Identity("ana"), sid))["task"] == "ana's"


BAD = [
    ({"task": "x"}, "give exactly one of 'at'"),
    ({"task": "x", "at": "2026-12-01T10:00:00+01:00", "every": "1h"}, "got at, every"),
    ({"task": "x", "at": "2026-11-30T10:00:00+01:00"}, "is in the past (it is 2026-12-01T08:00:00+00:00 now)"),
    ({"task": "x", "cron": "99 * * * *"}, "is not valid"),
    ({"task": "x", "every": "1h", "profile": "nobody"}, "nobody"),
    ({"task": "x", "every": "1h", "session_id": "ses_someone_else"}, "not found"),
]


async def test_bad_arguments_are_refused_with_what_to_do_and_nothing_is_stored(tmp_path):
    async with clocked_hub(write_config(tmp_path), ManualClock(ts(START))) as hub:
        for args, says in BAD:
            assert says in await refused(hub, "hermes_schedule_create", args)
        assert (await call(hub, "hermes_schedule_list", {}))["schedules"] == []


async def test_a_2026_host_listening_for_its_inbox_hears_its_own_runs_and_not_another_person_s(tmp_path):
    clock = ManualClock(ts(START))
    async with clocked_hub(write_config(tmp_path, schedules={"jitter": 0}), clock) as hub, \
            hub.client() as host:
        assert host.protocol_version == "2026-07-28"
        await call(hub, "hermes_schedule_create", {"task": "bob's", "at": "2026-12-01T09:30:00+01:00"}, user="bob")
        await call(hub, "hermes_schedule_create", {"task": "ana's", "at": "2026-12-01T10:00:00+01:00"})
        async with host.listen(tools_list_changed=True, resource_subscriptions=["hub://hermes/inbox"]) as sub:
            clock.set(ts("2026-12-01T09:30:00+01:00"))
            await settle(hub)
            await until(lambda: hub.scheduling.inbox.stats["arrived"] == 1)  # bob's run was told to bob's hosts
            await hub.announcer.changed({"tools"})  # a marker every host hears: bob's update would come before it
            clock.set(ts("2026-12-01T10:00:00+01:00"))
            with anyio.fail_after(30):
                events = [await sub.__anext__(), await sub.__anext__()]
        assert [type(e).__name__ for e in events] == ["ToolsListChanged", "ResourceUpdated"]
        assert events[1].uri == "hub://hermes/inbox"
        assert [i["task"] for i in await inbox(hub)] == ["ana's"]
