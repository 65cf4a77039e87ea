"""The servers as real processes: stdio by default, streamable HTTP with --http."""

import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support import PROJECT, free_port, process, wait_port

pytestmark = pytest.mark.anyio



@pytest.mark.parametrize(
    "module, tools",
    [
        ("servers.calendar", {"query", "create_event"}),
        ("servers.reminders", {"send_reminder", "list_reminders"}),
        ("servers.notes", {"create_note", "search_notes"}),
    ],
)
async def test_each_server_lists_its_tools_over_stdio(tmp_path, module, tools):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", module], env={"HERMES_DEMO_DATA": str(tmp_path)}, cwd=str(PROJECT)
    )
    with anyio.fail_after(20):
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} == tools
    # The child saw HERMES_DEMO_DATA, although the SDK passes it only an env allow-list plus env=.
    assert (tmp_path / f"{module.split('.')[1]}.json").exists()


async def test_a_server_started_with_http_serves_tool_calls_at_slash_mcp(tmp_path):
    port = free_port()
    log = tmp_path / "server.log"
    argv = [sys.executable, "-m", "servers.reminders", "--http", str(port)]
    with process(argv, log, env={"HERMES_DEMO_DATA": str(tmp_path / "data")}) as server:
        with anyio.fail_after(20):
            await wait_port(port, server, log)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                arguments = {"content": "Call mum", "time": "2026-12-01T09:00+01:00"}
                sent = await client.call_tool("send_reminder", arguments)
                refused = await client.call_tool("send_reminder", {"content": "Nap", "time": "tomorrow"})
                listed = await client.call_tool("list_reminders", {})
    assert sent.structured_content == {"id": "rem-1", "content": "Call mum", "time_utc": "2026-12-01T08:00:00Z"}
    assert refused.is_error and "2026-12-01T09:00:00+01:00" in refused.content[0].text
    assert listed.structured_content == {"reminders": [sent.structured_content]}
    assert (tmp_path / "data" / "reminders.json").exists()
