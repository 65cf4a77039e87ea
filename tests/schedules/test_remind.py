"""The issue's worked example: "remind me tomorrow at ten" through hermes_agent_run, with a model speaking
OpenAI's wire format (a fake vendor API served locally), makes a schedule that fires at that minute into
the inbox; and the bundled demo's reminder, made by the agent, fires at its time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from hermes_hub.core.schedules import ManualClock
from tests.agent import vendors
from tests.agent.test_providers import KEY
from tests.schedules.helpers import clocked_hub, inbox, settle, ts
from tests.support import demo

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "example"


async def test_remind_me_tomorrow_at_ten_through_a_real_wire_format_fires_at_that_minute_into_the_inbox(tmp_path):
    fake = vendors.FakeVendor("/v1/chat/completions")
    task = "Remind me to bring the project plan, and look at my calendar"
    fake.answer(vendors.openai_tool_call("call_1", "hermes_schedule_create", {
        "task": task, "at": "2026-12-02T10:00:00", "timezone": "Europe/Berlin"}))
    fake.answer(vendors.openai_text("I will remind you tomorrow at 10:00."))
    fake.answer(vendors.openai_text("Reminder: bring the project plan. Your calendar is free until noon."))
    clock = ManualClock(ts("2026-12-01T16:00:00+01:00"))
    async with vendors.served(fake) as url:
        (tmp_path / "hub.json").write_text(json.dumps({
            "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "auth": {"local_user": "ana"},
            "agent": {"provider": "openai", "model": "qwen-plus", "base_url": url, "api_key": KEY,
                      "timezone": "Europe/Berlin", "max_retries": 0}}))
        async with clocked_hub(tmp_path / "hub.json", clock) as hub, hub.client() as host:
            with anyio.fail_after(60):
                said = await host.call_tool("hermes_agent_run", {"task": "Remind me tomorrow at ten to bring the "
                                                                         "project plan, and look at my calendar"})
            assert said.structured_content["answer"] == "I will remind you tomorrow at 10:00."
            assert said.structured_content["tool_calls"][0]["name"] == "hermes_schedule_create"
            [made] = (await hub.scheduling.book.list(hub.local))
            assert (made["task"], made["next_run"]) == (task, "2026-12-02T10:00:00+01:00")
            clock.set(ts("2026-12-02T09:59:00+01:00"))
            await settle(hub)
            assert await inbox(hub) == [] and len(fake.received) == 2
            clock.set(ts("2026-12-02T10:00:00+01:00"))
            await settle(hub)
            [item] = await inbox(hub)
            assert item["answer"] == "Reminder: bring the project plan. Your calendar is free until noon."
            assert item["due_at"] == "2026-12-02T09:00:00+00:00" and item["state"] == "done"
            asked = fake.received[2].body["messages"][-1]["content"]
            assert asked.startswith("[scheduled run of ") and asked.endswith(task)
            read = await host.read_resource("hub://hermes/inbox")
            assert json.loads(read.contents[0].text)["items"][0]["occurrence_id"] == item["occurrence_id"]


async def test_the_bundled_demo_s_reminder_made_by_the_agent_fires_at_its_time_into_the_inbox(tmp_path):
    shutil.copy(EXAMPLE / "model.json", tmp_path)
    (tmp_path / "hub.json").write_text(json.dumps({
        "mcpServers": {"reminders": demo("reminders", tmp_path / "demo")},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "auth": {"local_user": "ana"},
        "agent": {"provider": "scripted", "script": "model.json"}}))
    clock = ManualClock(ts("2026-12-06T18:00:00+01:00"))
    async with clocked_hub(tmp_path / "hub.json", clock) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        with anyio.fail_after(60):
            said = await host.call_tool("hermes_agent_run", {"task": "remind me to leave for lunch"})
        assert [c["name"] for c in said.structured_content["tool_calls"]] == [
            "reminders_send_reminder", "hermes_schedule_create"]
        assert "noon" in said.structured_content["answer"]
        clock.set(ts("2026-12-07T12:00:00+01:00"))
        await settle(hub)
        [item] = await inbox(hub)
        assert item["state"] == "done" and item["answer"].startswith("Reminder: leave for lunch")
