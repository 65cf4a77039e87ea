"""tools/call from a 2026-07-28 host over HTTP is served beside the SDK's app (``HttpLane``): the host
sees what the SDK path gives a handshake-era host, its questions come back as input-required rounds,
a call it walks away from is cancelled, a long one is kept open by SSE pings, and every request the
lane does not take (bad headers, a session) still gets the SDK's exact answer."""

from __future__ import annotations

import json

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.support import Progress, serve_process, toy, until
from tests.test_call_lane import answers

pytestmark = pytest.mark.anyio
VERSION = "2026-07-28"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def served(tmp_path_factory):
    async with serve_process({"mcpServers": {"toy": toy()}}, tmp_path_factory.mktemp("lane")) as served:
        yield served


def raw_call(name: str, arguments: dict, request_id: int = 1) -> tuple[dict, dict]:
    """A 2026-07-28 tools/call as a host puts it on the wire: the body and its headers."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments,
        "_meta": {types.PROTOCOL_VERSION_META_KEY: VERSION, types.CLIENT_CAPABILITIES_META_KEY: {}}}}
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return body, headers


@pytest.mark.slow
async def test_a_2026_host_gets_over_http_what_a_handshake_host_gets(served):
    with anyio.fail_after(60):
        async with Client(streamable_http_client(served.url)) as modern, \
                Client(streamable_http_client(served.url), mode="legacy") as legacy:
            seen = {host.protocol_version: await answers(host) for host in (modern, legacy)}
    assert set(seen) == {VERSION, "2025-11-25"}
    got = seen[VERSION]
    assert got == seen["2025-11-25"]
    assert got["added"][:2] == (False, {"total": 5})
    assert got["bad"][0] is True and "Invalid arguments for tool 'toy_add'" in got["bad"][1]
    assert "unknown tool 'toy_nope'" in got["unknown"][1]


async def test_a_2026_host_that_answers_questions_gets_the_servers_question_as_a_round(served):
    asked: list[str] = []

    async def elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(60):
        async with Client(streamable_http_client(served.url), elicitation_callback=elicit) as host:
            assert host.protocol_version == VERSION
            result = await host.call_tool("toy_confirm", {"question": "Ship it?"})
    assert asked == ["Ship it?"]
    assert not result.is_error and result.content[0].text == "accept: True"


async def test_a_2026_host_that_answers_nothing_is_never_sent_a_round_and_is_told_why(served):
    with anyio.fail_after(60):
        async with Client(streamable_http_client(served.url)) as host:  # no elicitation callback: none declared
            result = await host.call_tool("toy_confirm", {"question": "Ship it?"})
    assert result.is_error
    assert "declared neither elicitation nor sampling, so it cannot be asked" in result.content[0].text


async def test_the_lane_answers_as_the_sdk_does_status_and_body(served):
    async with httpx2.AsyncClient(timeout=30) as http:
        body, headers = raw_call("toy_add", {"a": 2, "b": 3}, request_id="seven")
        good = await http.post(served.url, json=body, headers=headers)
        body, headers = raw_call("toy_add", {"a": 2, "b": 3})
        mismatched = await http.post(served.url, json=body, headers={**headers, "Mcp-Name": "toy_echo"})
        json_only = await http.post(served.url, json=body, headers={**headers, "Accept": "application/json"})
    assert good.status_code == 200 and good.headers["content-type"] == "application/json"
    answer = good.json()
    assert answer["id"] == "seven" and answer["result"]["structuredContent"] == {"total": 5}
    assert answer["result"]["resultType"] == "complete"
    assert "io.modelcontextprotocol/serverInfo" in answer["result"]["_meta"]
    # Not taken: the SDK answers with its exact errors.
    assert mismatched.status_code == 400 and "mcp-name header does not match" in mismatched.json()["error"]["message"]
    assert json_only.status_code == 406


async def test_a_call_the_host_walks_away_from_is_cancelled_and_audited(served):
    body, headers = raw_call("toy_sleep", {"seconds": 30})
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=30) as http:
            with anyio.move_on_after(1):
                await http.post(served.url, json=body, headers=headers)
            async with Client(streamable_http_client(served.url)) as host:
                async def audited() -> list | None:
                    rows = (await host.call_tool("hermes_audit_query", {"tool": "toy_sleep"})).structured_content
                    return rows["calls"] if rows and rows["calls"] else None

                rows = await until(audited, timeout=None)
    assert [(r["outcome"], r["error"]) for r in rows] == [("error", "cancelled")]


@pytest.mark.slow
async def test_a_call_past_15_seconds_is_kept_open_with_sse_pings_and_answered_on_the_stream(served):
    body, headers = raw_call("toy_sleep", {"seconds": 16}, request_id=42)
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=30) as http:
            async with http.stream("POST", served.url, json=body, headers=headers) as response:
                kind = response.headers["content-type"]
                text = "".join([chunk async for chunk in response.aiter_text()])
    assert response.status_code == 200 and kind == "text/event-stream"
    assert text.startswith(": ping")
    event = [line for line in text.splitlines() if line.startswith("data: ")]
    answer = json.loads(event[-1].removeprefix("data: "))
    assert answer["id"] == 42 and not answer["result"].get("isError")


@pytest.mark.slow
async def test_a_limit_with_http_429_answers_a_2026_http_host_429_with_retry_after(tmp_path):
    rules = [{"name": "tight", "tools": ["toy_echo"], "calls_per_minute": 1, "http_429": True},
             {"name": "soft", "tools": ["toy_add"], "calls_per_minute": 1}]
    config = {"mcpServers": {"toy": toy()}, "guards": {"limits": rules}}
    async with serve_process(config, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        body, headers = raw_call("toy_echo", {"text": "one"})
        first = await http.post(served.url, json=body, headers=headers)
        second = await http.post(served.url, json=body, headers=headers)
        async with Client(streamable_http_client(served.url)) as host:
            with pytest.raises(MCPError) as refused:  # an SDK host shows the same sentence
                await host.call_tool("toy_echo", {"text": "three"})
            with pytest.raises(MCPError) as by_sdk:  # a progress token: the SDK's path, not the lane, says so too
                await host.call_tool("toy_echo", {"text": "four"}, progress_callback=Progress())
            await host.call_tool("toy_add", {"a": 1, "b": 1})
            soft = await host.call_tool("toy_add", {"a": 1, "b": 2})  # no http_429: a tool error, as before
            other = await host.call_tool("toy_count", {"to": 2})  # what no limit covers still runs
    assert first.status_code == 200 and first.json()["result"]["content"][0]["text"] == "one"
    assert second.status_code == 429 and 1 <= int(second.headers["retry-after"]) <= 60
    error = second.json()["error"]
    assert error["message"].startswith("limit 'tight' reached: 1 call a minute for user")
    assert error["data"]["hermes-hub/limit"]["limit"] == "tight"
    assert "limit 'tight' reached" in refused.value.message and "limit 'tight' reached" in by_sdk.value.message
    assert soft.is_error and "limit 'soft' reached" in soft.content[0].text
    assert not other.is_error
