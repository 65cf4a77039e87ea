"""tools/call from a 2026-07-28 stdio host is served beside the SDK's dispatch (``CallLane``):
the host sees exactly what the SDK path gives a handshake-era host, errors and cancellation too."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.support import PROJECT, toy, until, until_listed

pytestmark = pytest.mark.anyio


def stdio_hub(tmp_path, name: str = "hub") -> StdioServerParameters:
    cfg = tmp_path / f"{name}.json"
    cfg.write_text(json.dumps({"mcpServers": {"toy": toy()}}))
    # The SDK passes a child only an allow-list of variables: hand on this test's own data dir.
    return StdioServerParameters(command=sys.executable, args=["-m", "hermes_hub", "serve", "--stdio", "-q",
                                                               "--config", str(cfg)], cwd=str(PROJECT),
                                 env={"HERMES_DATA_DIR": str(tmp_path / f"{name}-data")})


async def answers(host: Client) -> dict:
    """What a host gets for a good call, a tool error, bad arguments and an unknown tool."""
    added = await host.call_tool("toy_add", {"a": 2, "b": 3})
    bad = await host.call_tool("toy_add", {"a": "two"})
    with pytest.raises(MCPError) as unknown:
        await host.call_tool("toy_nope", {})
    return {"added": (added.is_error, added.structured_content, added.content[0].text),
            "bad": (bad.is_error, bad.content[0].text), "unknown": (unknown.value.code, unknown.value.message)}


@pytest.mark.slow
async def test_a_2026_host_gets_over_stdio_what_a_handshake_host_gets(tmp_path):
    with anyio.fail_after(60):
        async with Client(stdio_hub(tmp_path, "modern")) as modern, \
                Client(stdio_hub(tmp_path, "legacy"), mode="legacy") as legacy:
            for host in (modern, legacy):  # the hub answers at once; its server joins the list when READY
                await until_listed(host, "toy_add", timeout=None)
            seen = {host.protocol_version: await answers(host) for host in (modern, legacy)}
    assert set(seen) == {"2026-07-28", "2025-11-25"}
    got = seen["2026-07-28"]
    assert got == seen["2025-11-25"]
    assert got["added"][:2] == (False, {"total": 5})
    assert got["bad"][0] is True and "Invalid arguments for tool 'toy_add'" in got["bad"][1]
    assert "unknown tool 'toy_nope'" in got["unknown"][1]


@pytest.mark.slow
async def test_a_call_the_2026_host_cancels_over_stdio_is_cancelled_and_audited(tmp_path):
    with anyio.fail_after(60):
        async with Client(stdio_hub(tmp_path)) as host:
            await until_listed(host, "toy_sleep", timeout=None)
            with anyio.move_on_after(1):  # the host gives up: the SDK sends notifications/cancelled
                await host.call_tool("toy_sleep", {"seconds": 30})
            after = await host.call_tool("toy_echo", {"text": "still serving"})
            async def audited() -> dict | None:  # the cancelled call's row is written when its block ends
                rows = (await host.call_tool("hermes_audit_query", {"tool": "toy_sleep"})).structured_content
                return rows if rows and rows["calls"] else None

            rows = await until(audited, timeout=None)  # bounded by fail_after
    assert after.content[0].text == "still serving"
    assert [(r["outcome"], r["error"]) for r in rows["calls"]] == [("error", "cancelled")]


def test_an_answer_pydantic_cannot_write_goes_out_as_an_error_for_its_request():
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    from hermes_hub.infra.sdk import _wire_line

    line = _wire_line(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"text": "\ud800"})))
    answer = json.loads(line)
    assert line.endswith(b"\n") and answer["id"] == 3 and answer["error"]["code"] == types.INTERNAL_ERROR
    assert "not valid Unicode" in answer["error"]["message"]
