import json

import anyio
import pytest
from mcp import Client

from hermes_hub.demo.calendar import build_server

pytestmark = pytest.mark.anyio


async def create(client: Client, title: str, date: str, **arguments):
    result = await client.call_tool("create_event", {"title": title, "date": date, **arguments})
    assert not result.is_error, result.content
    return result.structured_content


async def query(client: Client, start_date: str, end_date: str) -> list[dict]:
    result = await client.call_tool("query", {"start_date": start_date, "end_date": end_date})
    assert not result.is_error, result.content
    return result.structured_content["events"]


async def error_text(client: Client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


async def test_a_fresh_calendar_has_no_events_and_an_empty_data_file(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        assert await query(client, "2000-01-01", "2100-12-31") == []
    assert json.loads((tmp_path / "calendar.json").read_text()) == {"next_id": 1, "events": []}


async def test_created_event_is_returned_with_an_id_and_found_on_its_date(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        event = await create(client, title="Dentist", date="2026-12-01", time="09:30", duration_minutes=45)
        assert event == {
            "id": "evt-1", "title": "Dentist", "date": "2026-12-01", "time": "09:30", "duration_minutes": 45
        }
        assert await query(client, "2026-12-01", "2026-12-01") == [event]


async def test_an_event_without_a_time_is_all_day_and_lasts_an_hour_by_default(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        event = await create(client, title="Holiday", date="2026-12-24")
    assert (event["time"], event["duration_minutes"]) == (None, 60)


async def test_query_range_is_inclusive_and_sorted_by_date_then_time(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        for title, date, time in [
            ("after", "2026-12-04", None),
            ("late", "2026-12-02", "18:00"),
            ("last day", "2026-12-03", "08:00"),
            ("early", "2026-12-02", "07:00"),
            ("first day", "2026-12-01", None),
            ("before", "2026-11-30", "12:00"),
        ]:
            await create(client, title=title, date=date, time=time)
        events = await query(client, "2026-12-01", "2026-12-03")
    assert [e["title"] for e in events] == ["first day", "early", "late", "last day"]


@pytest.mark.parametrize("bad", ["tomorrow", "2026-13-01", "20261201", "2026-12-01T09:00", ""])
async def test_a_bad_start_date_is_refused_with_the_expected_format(tmp_path, bad):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "query", {"start_date": bad, "end_date": "2026-12-31"})
    assert f"start_date must be an ISO 8601 date like 2026-12-01, got {bad!r}" in text


async def test_a_bad_end_date_is_refused_with_the_expected_format(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "query", {"start_date": "2026-12-01", "end_date": "next week"})
    assert "end_date must be an ISO 8601 date like 2026-12-01, got 'next week'" in text


async def test_an_end_date_before_the_start_date_is_refused(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "query", {"start_date": "2026-12-02", "end_date": "2026-12-01"})
    assert "end_date 2026-12-01 is before start_date 2026-12-02; pass an end_date on or after it" in text


async def test_creating_an_event_on_a_bad_date_is_refused_with_the_expected_format(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "create_event", {"title": "Party", "date": "Friday"})
        assert "date must be an ISO 8601 date like 2026-12-01, got 'Friday'" in text
        assert await query(client, "2000-01-01", "2100-12-31") == []


@pytest.mark.parametrize("bad", ["9am", "25:00", "9:30", "09:30:00"])
async def test_creating_an_event_at_a_bad_time_is_refused_with_the_expected_format(tmp_path, bad):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "create_event", {"title": "Party", "date": "2026-12-05", "time": bad})
    assert f"time must be a 24-hour time HH:MM like 09:30, or omitted for an all-day event; got {bad!r}" in text


async def test_a_non_positive_duration_is_refused(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(
            client, "create_event", {"title": "Party", "date": "2026-12-05", "duration_minutes": 0}
        )
    assert "duration_minutes must be a positive number of minutes like 30, got 0" in text


async def test_an_empty_title_is_refused(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await error_text(client, "create_event", {"title": "  ", "date": "2026-12-05"})
    assert "title must not be empty: give the event a short title" in text


async def test_events_survive_a_restart_on_the_same_data_dir(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        first = await create(client, title="Standup", date="2026-12-01", time="10:00")
    async with Client(build_server(tmp_path)) as client:
        second = await create(client, title="Retro", date="2026-12-01", time="16:00")
        assert await query(client, "2026-12-01", "2026-12-01") == [first, second]
    assert second["id"] == "evt-2"


async def test_both_tools_declare_an_output_schema(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"query", "create_event"}
    assert "events" in tools["query"].output_schema["properties"]
    assert "id" in tools["create_event"].output_schema["properties"]


async def test_without_a_data_dir_the_server_uses_hermes_demo_data_and_creates_it(tmp_path, monkeypatch):
    target = tmp_path / "nested" / "demo"
    monkeypatch.setenv("HERMES_DEMO_DATA", str(target))
    async with Client(build_server()) as client:
        await create(client, title="Dentist", date="2026-12-01")
    assert [e["title"] for e in json.loads((target / "calendar.json").read_text())["events"]] == ["Dentist"]


async def test_writes_leave_no_temporary_files_behind(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        for day in range(1, 4):
            await create(client, title=f"Day {day}", date=f"2026-12-0{day}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calendar.json", "calendar.json.lock"]


async def test_concurrent_creations_from_two_servers_on_one_data_dir_lose_nothing(tmp_path):
    # Sync tools run on worker threads, so these calls really race for the file.
    async with Client(build_server(tmp_path)) as one, Client(build_server(tmp_path)) as two:
        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(create, (one, two)[i % 2], f"Event {i}", "2026-12-01")
        events = await query(one, "2026-12-01", "2026-12-01")
    assert sorted(e["title"] for e in events) == sorted(f"Event {i}" for i in range(20))
    assert len({e["id"] for e in events}) == 20
