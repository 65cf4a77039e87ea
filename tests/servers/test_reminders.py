import pytest
from mcp import Client

from hermes_hub.demo.reminders import build_server

pytestmark = pytest.mark.anyio

FORMAT_HINT = "like 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z"


async def send(client: Client, content: str, time: str) -> dict:
    result = await client.call_tool("send_reminder", {"content": content, "time": time})
    assert not result.is_error, result.content
    return result.structured_content


async def listed(client: Client) -> list[dict]:
    result = await client.call_tool("list_reminders", {})
    assert not result.is_error, result.content
    return result.structured_content["reminders"]


async def refusal(client: Client, content: str, time: str) -> str:
    result = await client.call_tool("send_reminder", {"content": content, "time": time})
    assert result.is_error
    return result.content[0].text


async def test_a_reminder_with_an_offset_is_stored_with_its_normalised_utc_time(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        reminder = await send(client, "Call mum", "2026-12-01T09:00:00+01:00")
        assert reminder == {"id": "rem-1", "content": "Call mum", "time_utc": "2026-12-01T08:00:00Z"}
        assert await listed(client) == [reminder]


@pytest.mark.parametrize(
    "time, utc",
    [
        ("2026-12-01T08:00:00Z", "2026-12-01T08:00:00Z"),
        ("2026-12-01T08:00Z", "2026-12-01T08:00:00Z"),
        ("2026-11-30T23:30:00-05:00", "2026-12-01T04:30:00Z"),
        ("2026-12-01T09:00:00.750+01:00", "2026-12-01T08:00:00Z"),
    ],
)
async def test_zone_qualified_times_are_accepted_in_any_iso_8601_form(tmp_path, time, utc):
    async with Client(build_server(tmp_path)) as client:
        assert (await send(client, "Stretch", time))["time_utc"] == utc


@pytest.mark.parametrize("vague", ["tomorrow morning", "9am", "2026-12-01 at 9", ""])
async def test_a_vague_time_is_refused_with_the_format_to_use(tmp_path, vague):
    async with Client(build_server(tmp_path)) as client:
        text = await refusal(client, "Call mum", vague)
        assert await listed(client) == []
    assert f"time must be an ISO 8601 date-time with a timezone offset, {FORMAT_HINT}; got {vague!r}" in text


@pytest.mark.parametrize("zoneless", ["2026-12-01T09:00", "2026-12-01T09:00:00", "2026-12-01"])
async def test_a_zoneless_time_is_refused_with_the_format_to_use(tmp_path, zoneless):
    async with Client(build_server(tmp_path)) as client:
        text = await refusal(client, "Call mum", zoneless)
        assert await listed(client) == []
    assert f"time {zoneless!r} has no timezone offset; add the user's offset, {FORMAT_HINT}" in text


async def test_empty_content_is_refused(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        text = await refusal(client, " ", "2026-12-01T09:00:00Z")
    assert "content must not be empty: say what to remind the user about" in text


async def test_reminders_are_listed_earliest_first(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        await send(client, "second", "2026-12-01T10:00:00+00:00")
        await send(client, "third", "2026-12-01T12:00:00+01:00")  # 11:00Z
        await send(client, "first", "2026-12-01T10:00:00+02:00")  # 08:00Z
        assert [r["content"] for r in await listed(client)] == ["first", "second", "third"]


async def test_reminders_survive_a_restart_on_the_same_data_dir(tmp_path):
    async with Client(build_server(tmp_path)) as client:
        first = await send(client, "Water plants", "2026-12-01T07:00:00Z")
    async with Client(build_server(tmp_path)) as client:
        second = await send(client, "Pay rent", "2026-12-02T07:00:00Z")
        assert await listed(client) == [first, second]
    assert (first["id"], second["id"]) == ("rem-1", "rem-2")
