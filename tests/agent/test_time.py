"""Time: hermes_time_resolve turns what a person says into the absolute ISO 8601 time they mean, in their
timezone (near midnight, across DST changes, in English and Chinese), and every run's instructions carry
the current date, weekday, time and timezone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import anyio
import pytest
from mcp import Client

from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from tests.agent.test_providers import KEY, OPENAI, base_for
from tests.agent.vendors import FakeVendor, served
from tests.support import serve_process, toy

pytestmark = pytest.mark.anyio

CASES = [  # (text, timezone, now, start expected)
    # 23:55 in Shanghai is 15:55 UTC: "tomorrow" is the 2nd there, whatever the server's own date
    ("remind me tomorrow at 10", "Asia/Shanghai", "2026-12-01T15:55:00+00:00", "2026-12-02T10:00:00+08:00"),
    # New York springs forward on 2026-03-08: 10:00 that day is EDT
    ("remind me tomorrow at 10", "America/New_York", "2026-03-07T23:50:00-05:00", "2026-03-08T10:00:00-04:00"),
    # Berlin falls back on 2026-10-25: 10:00 that day is CET
    ("remind me tomorrow at 10", "Europe/Berlin", "2026-10-24T23:45:00+02:00", "2026-10-25T10:00:00+01:00"),
    # two real hours after 01:30 EST, across the skipped hour, is 04:30 EDT
    ("in two hours", "America/New_York", "2026-03-08T01:30:00-05:00", "2026-03-08T04:30:00-04:00"),
    ("下周一上午十点", "Asia/Shanghai", "2026-12-01T09:00:00", "2026-12-07T10:00:00+08:00"),  # said on a Tuesday
    ("两个小时后提醒我", "Asia/Shanghai", "2026-12-01T09:00:00+08:00", "2026-12-01T11:00:00+08:00"),
    ("明天下午三点半开会", "Asia/Shanghai", "2026-12-01T23:10:00+08:00", "2026-12-02T15:30:00+08:00"),
    ("at 10", "Asia/Shanghai", "2026-12-01T23:00:00+08:00", "2026-12-02T10:00:00+08:00"),  # past ten: tomorrow's
]


def hub_config(tmp_path, **agent):
    return {"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "agent": agent}


async def test_time_resolve_lands_on_the_day_the_person_means_through_a_served_hub(tmp_path):
    async with serve_process(hub_config(tmp_path, timezone="Asia/Shanghai"), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                got = [(await host.call_tool("hermes_time_resolve", {"text": t, "timezone": z, "now": n})
                        ).structured_content for t, z, n, _ in CASES]
                default = (await host.call_tool("hermes_time_resolve", {"text": "tomorrow",
                                                                        "now": "2026-12-01T10:00:00+00:00"})
                           ).structured_content
                several = await host.call_tool("hermes_time_resolve", {"text": "tomorrow at 9:30am and in 30 minutes",
                                                                       "now": "2026-12-01T08:00:00+08:00"})
    assert [g["start"] for g in got] == [c[3] for c in CASES]
    assert all(g["end"] == g["start"] and g["all_day"] is False for g in got)  # instants
    assert got[0]["text"] == "tomorrow at 10" and got[0]["timezone"] == "Asia/Shanghai"
    # no timezone in the call: agent.timezone's; a day with no time is the whole day
    assert default == {"start": "2026-12-02T00:00:00+08:00", "end": "2026-12-03T00:00:00+08:00", "all_day": True,
                       "text": "tomorrow", "timezone": "Asia/Shanghai"}
    assert [t["start"] for t in several.structured_content["times"]] == ["2026-12-02T09:30:00+08:00",
                                                                         "2026-12-01T08:30:00+08:00"]
    assert several.content[0].text.startswith("[")  # a list when the text names several times


@pytest.mark.slow
async def test_an_unknown_timezone_or_a_text_without_a_time_is_an_error_saying_what_to_write(tmp_path):
    async with serve_process(hub_config(tmp_path), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                zone = await host.call_tool("hermes_time_resolve", {"text": "tomorrow", "timezone": "Mars/Olympus"})
                nothing = await host.call_tool("hermes_time_resolve", {"text": "whenever you like"})
                bad_now = await host.call_tool("hermes_time_resolve", {"text": "tomorrow", "now": "yesterday-ish"})
    assert zone.is_error and zone.content[0].text == (
        "unknown timezone 'Mars/Olympus'; use an IANA name such as 'Europe/Berlin', 'America/New_York' or "
        "'Asia/Shanghai'")
    assert nothing.is_error and "no time found in 'whenever you like'" in nothing.content[0].text
    assert "e.g. 'tomorrow at 10'" in nothing.content[0].text
    assert bad_now.is_error and "is not ISO 8601; write e.g. 2026-12-01T09:00:00+08:00" in bad_now.content[0].text


def test_an_unknown_agent_timezone_in_hub_json_names_the_key():
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {}, "agent": {"timezone": "Europe/Berlinn"}}, env={})
    assert "agent.timezone" in str(e.value) and "unknown timezone 'Europe/Berlinn'" in str(e.value)


@pytest.mark.slow
async def test_every_run_tells_the_model_the_date_weekday_time_and_timezone_and_how_to_pass_times(tmp_path):
    fake = FakeVendor(OPENAI.path)
    fake.answer(OPENAI.text("Noted."))
    config = {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
              "agent": {"provider": "openai", "model": OPENAI.model, "api_key": KEY, "max_retries": 0,
                        "timezone": "Asia/Shanghai"}}
    async with served(fake) as url:
        config["agent"]["base_url"] = base_for(OPENAI, url)
        async with serve_process(config, tmp_path) as hub:
            with anyio.fail_after(60):
                async with Client(hub.url) as host:
                    before = datetime.now(ZoneInfo("Asia/Shanghai"))
                    await host.call_tool("hermes_agent_run", {"task": "remind me tomorrow at 10 to call Ana"})
                    after = datetime.now(ZoneInfo("Asia/Shanghai"))
    system = fake.received[0].body["messages"][0]
    assert system["role"] == "system"
    said = {f"Now: {t.strftime('%A %Y-%m-%d %H:%M')} in Asia/Shanghai (UTC+08:00)" for t in (before, after)}
    assert any(s in system["content"] for s in said), system["content"]
    assert "absolute ISO 8601 date-time with its offset" in system["content"]
    assert "call hermes_time_resolve" in system["content"]  # the tool is offered, so the note names it
