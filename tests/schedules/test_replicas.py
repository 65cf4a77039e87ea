"""Hubs sharing one PostgreSQL database fire each occurrence once: two in-process replicas on one clock, and
a served replica killed with -9 mid-run whose occurrence another replica takes over when its lease runs out
(the inbox shows it once)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from mcp import Client

from hermes_hub.core.schedules import ManualClock
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.copy import copy_store
from hermes_hub.infra.storage.timetable import Planned, ScheduleRecord
from tests.agent import vendors
from tests.agent.test_providers import KEY
from tests.postgres import new_database
from tests.schedules.helpers import call, clocked_hub, inbox, settle, ts, write_config
from tests.support import serve_process, until

pytestmark = pytest.mark.anyio


async def test_two_replicas_on_postgres_fire_every_occurrence_exactly_once(pg_server, tmp_path):
    url = await new_database(pg_server)
    config = write_config(tmp_path, storage={"url": url}, memory={"embedder": "none"}, schedules={"jitter": 0})
    clock = ManualClock(ts("2026-12-01T08:00:00+00:00"))
    async with clocked_hub(config, clock) as a, clocked_hub(config, clock) as b:
        for i in range(8):
            await call(a, "hermes_schedule_create", {"task": f"job {i}", "every": "1h"})
        for _ in range(2):
            clock.advance(3600)
            await settle(a)
            await settle(b)
            await settle(a)
        items = await inbox(a)
        assert len(items) == 16 and {i["state"] for i in items} == {"done"}
        assert len({(i["schedule_id"], i["due_at"]) for i in items}) == 16  # no occurrence twice
        assert len(await a.store.list_runs("ana", limit=100)) == 16  # and no agent run twice
        done = a.scheduling.scheduler.stats["done"] + b.scheduling.scheduler.stats["done"]
        assert done == 16 and a.scheduling.scheduler.stats["lost"] + b.scheduling.scheduler.stats["lost"] == 0


@pytest.mark.slow
async def test_a_replica_killed_mid_run_loses_its_lease_and_another_runs_the_occurrence_once(pg_server, tmp_path):
    fake = vendors.FakeVendor("/v1/chat/completions")
    fake.answer(vendors.openai_text("never sent: the replica dies first"), delay=60)
    fake.answer(vendors.openai_text("Stretch now."))
    async with vendors.served(fake) as base:
        # the killed replica's session lock and occurrence lease run out within 3 s and 2 s
        config = {"storage": {"url": await new_database(pg_server), "session_lock_ttl": 3},
                  "memory": {"embedder": "none"},
                  "auth": {"local_user": "ana"}, "schedules": {"lease": 2, "jitter": 0, "retry_backoff": 1},
                  "agent": {"provider": "openai", "model": "qwen-plus", "base_url": base, "api_key": KEY,
                            "max_retries": 0}}
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        async with serve_process(config, tmp_path / "a") as first:
            async with Client(first.url) as host:
                soon = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
                made = await host.call_tool("hermes_schedule_create", {"task": "tell me to stretch", "at": soon})
                assert not made.is_error, made.content[0].text
            await until(lambda: fake.received, timeout=60)  # the run is waiting for the model
            first.proc.kill()  # SIGKILL: no shutdown, the lease is left behind
            first.proc.wait(10)
        async with serve_process(config, tmp_path / "b") as second, Client(second.url) as host:
            async def landed() -> list[dict]:
                read = await host.read_resource("hub://hermes/inbox")
                return json.loads(read.contents[0].text)["items"]

            with anyio.fail_after(60):
                items = await until(landed, timeout=None)
    assert [(i["state"], i["answer"], i["attempts"]) for i in items] == [("done", "Stretch now.", 2)]
    assert len(fake.received) == 2


async def test_schedules_and_their_runs_move_to_postgresql_with_the_store(pg_server, tmp_path):
    record = ScheduleRecord("sch_move", "ana", "user", "check the build", "every", "3600.0", "UTC", "default", None,
                            None, 0.0, None, None, "active", 7200.0, 1.0, 1.0)
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as sqlite, open_store(await new_database(pg_server)) as pg:
        await sqlite.add_schedule(record)
        assert await sqlite.plan_schedule("sch_move", 7200.0, 10800.0, "active", [Planned(7200.0, 7200.0, "pending")],
                                          7200.0)
        held = await sqlite.claim_occurrence("r1", 7200.0, lease=60)
        assert await sqlite.finish_occurrence(held.occurrence_id, "r1", "done", {"answer": "green"}, 7201.0)
        report = await copy_store(sqlite, pg)
        assert ("schedules", 1, 1) in report.counts and ("schedule_runs", 1, 1) in report.counts
        assert await pg.list_schedules("ana") == [replace(record, next_due=10800.0)]
        assert [o.answer for o in await pg.occurrences("ana", finished=True)] == ["green"]
        assert await pg.plan_schedule("sch_move", 10800.0, 14400.0, "active", [Planned(10800.0, 10800.0, "pending")],
                                      10800.0)  # new rows get ids after the copied ones
        assert (await pg.claim_occurrence("r2", 10800.0, lease=60)).occurrence_id == held.occurrence_id + 1
