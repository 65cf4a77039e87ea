"""mcp-server-time (PyPI, its own venv) as a stdio downstream of a served hub, in UTC."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from tests.interop.conftest import served_by, time_server
from tests.support import served_hub

pytestmark = pytest.mark.anyio
ERAS = ["auto", "legacy"]


@pytest.fixture(scope="module")
async def hub(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("time")
    async with served_hub({"mcpServers": {"time": time_server()}}, tmp) as url:
        yield url


@pytest.mark.slow
async def test_its_tools_are_listed_under_the_time_prefix_with_their_schemas(hub):
    with anyio.fail_after(30):
        async with Client(hub) as host:
            tools = {t.name: t for t in served_by((await host.list_tools()).tools, "time")}
    assert set(tools) == {"time_get_current_time", "time_convert_time"}
    current, convert = tools["time_get_current_time"], tools["time_convert_time"]
    assert current.input_schema["required"] == ["timezone"]
    assert sorted(convert.input_schema["required"]) == ["source_timezone", "target_timezone", "time"]
    assert "'UTC'" in current.input_schema["properties"]["timezone"]["description"]  # --local-timezone=UTC
    assert current.annotations.read_only_hint and current.output_schema is not None
    assert convert.meta["hermes-hub/origin"] == {"server": "time", "name": "convert_time"}


@pytest.mark.parametrize("mode", ERAS)
async def test_get_current_time_is_called_through_the_hub(hub, mode):
    with anyio.fail_after(30):
        async with Client(hub, mode=mode) as host:
            result = await host.call_tool("time_get_current_time", {"timezone": "Asia/Tokyo"})
    assert not result.is_error
    assert result.structured_content["timezone"] == "Asia/Tokyo"
    assert result.structured_content["datetime"].endswith("+09:00")


@pytest.mark.parametrize("mode", ERAS)
async def test_convert_time_is_called_through_the_hub(hub, mode):
    # Zones without daylight saving time, so the answer does not depend on the date.
    args = {"source_timezone": "Asia/Kolkata", "time": "16:30", "target_timezone": "Asia/Tokyo"}
    with anyio.fail_after(30):
        async with Client(hub, mode=mode) as host:
            result = await host.call_tool("time_convert_time", args)
    assert not result.is_error
    converted = result.structured_content
    assert converted["source"]["datetime"].endswith("T16:30:00+05:30")
    assert converted["target"]["datetime"].endswith("T20:00:00+09:00")
    assert converted["time_difference"] == "+3.5h"


async def test_a_bad_time_zone_comes_back_as_the_servers_tool_error(hub):
    with anyio.fail_after(30):
        async with Client(hub) as host:
            result = await host.call_tool("time_get_current_time", {"timezone": "Mars/Base"})
    assert result.is_error
    assert "Invalid timezone" in result.content[0].text
