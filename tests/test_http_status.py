"""A downstream HTTP server that answers 429 / 502 / 503 / 504: the hub names the status, retries safe
calls after the server's ``Retry-After`` (capped), and never repeats a call that is not safe to repeat.

The downstream is a real MCP server over HTTP (uvicorn, its own process) behind a gate that refuses
its first tool calls (``tests/fixtures/busy_http_server.py``)."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.core.aggregation.retry import MAX_RETRY_AFTER
from hermes_hub.infra.config import parse_config
from hermes_hub.downstream.http_status import parse_retry_after
from tests.support import free_port, process, wait_port

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def busy_server(tmp_path: Path, status: int, *flags: str, **server: Any) -> AsyncIterator[tuple[Client, str]]:
    """A hub (in this process) whose server ``busy`` is the gated HTTP server; yields a host and its URL."""
    port = free_port()
    argv = [sys.executable, "-m", "tests.fixtures.busy_http_server", "--port", str(port), "--status", str(status),
            *flags]
    log = tmp_path / "busy.log"
    with process(argv, log) as proc:
        with anyio.fail_after(20):
            await wait_port(port, proc, log)
        cfg = {"url": f"http://127.0.0.1:{port}/mcp", "retries": 2, **server}
        async with Hub(parse_config({"mcpServers": {"busy": cfg}})) as hub:
            with anyio.fail_after(30):
                assert await hub.wait_settled(30)
            assert hub.pool.connections["busy"].ready, hub.pool.connections["busy"].error
            async with hub.client() as host:
                yield host, f"http://127.0.0.1:{port}"


async def hits(base: str) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=5) as http:
        return (await http.get(f"{base}/hits")).json()


async def timed(host: Client, tool: str, args: dict[str, Any]) -> tuple[float, Any]:
    started = time.monotonic()
    with anyio.fail_after(30):
        result = await host.call_tool(tool, args)
    return time.monotonic() - started, result


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.slow
async def test_a_read_only_call_refused_with_429_is_retried_after_the_servers_retry_after_and_succeeds(
    tmp_path, mode
):
    async with busy_server(tmp_path, 429, "--times", "2", "--retry-after", "1", mode=mode) as (host, base):
        took, result = await timed(host, "busy_lookup", {"key": "k"})
        seen = await hits(base)
    assert not result.is_error and result.content[0].text == "value of k"
    assert seen == {"refused": 2, "ran": {"lookup": 1}}
    assert took >= 2.0  # waited the asked 1 s twice


@pytest.mark.parametrize("status", [502, 503, 504])
@pytest.mark.slow
async def test_a_read_only_call_refused_by_a_busy_server_or_its_proxy_is_retried_and_succeeds(tmp_path, status):
    async with busy_server(tmp_path, status, "--times", "1") as (host, base):
        took, result = await timed(host, "busy_lookup", {"key": "k"})
        seen = await hits(base)
    assert not result.is_error and result.content[0].text == "value of k"
    assert seen == {"refused": 1, "ran": {"lookup": 1}}
    assert took >= 1.0  # the policy's own first delay, as no Retry-After was sent


async def test_a_call_that_is_not_safe_to_repeat_is_not_retried_and_the_error_says_status_and_what_to_do(tmp_path):
    async with busy_server(tmp_path, 503, "--times", "1", "--retry-after", "1") as (host, base):
        took, result = await timed(host, "busy_append", {"line": "x"})
        seen = await hits(base)
        again = await host.call_tool("busy_append", {"line": "y"})
    text = result.content[0].text
    assert result.is_error and took < 1.0
    assert text.startswith("server 'busy': is unavailable (503 Service Unavailable): overloaded or down for "
                           "maintenance; try again later (it said: Service busy); it asked to retry after 1s. ")
    assert text.endswith("Not retried: tool 'append' is not known to be safe to repeat (no readOnlyHint or "
                         "idempotentHint, not in mcpServers.busy.retryable); call it again yourself if repeating "
                         "is safe")
    assert seen == {"refused": 1, "ran": {}}
    assert again.content[0].text == "appended y"


@pytest.mark.slow
async def test_a_tool_listed_as_retryable_is_retried_and_its_servers_own_error_text_is_quoted(tmp_path):
    async with busy_server(tmp_path, 502, "--times", "1", "--json-body", retryable=["app*"]) as (host, base):
        _, result = await timed(host, "busy_append", {"line": "x"})
        seen = await hits(base)
    assert result.content[0].text == "appended x" and seen == {"refused": 1, "ran": {"append": 1}}


async def test_a_retry_after_longer_than_the_cap_is_not_waited_for_and_the_error_says_when_to_come_back(tmp_path):
    async with busy_server(tmp_path, 429, "--times", "1", "--retry-after", "120") as (host, base):
        took, result = await timed(host, "busy_lookup", {"key": "k"})
        seen = await hits(base)
    text = result.content[0].text
    assert result.is_error and took < MAX_RETRY_AFTER
    assert "is rate-limiting the hub (429 Too Many Requests): slow down, or raise its rate limit" in text
    assert text.endswith(f"it asked to retry after 120s. Not retried: that is longer than the hub waits within a "
                         f"call ({MAX_RETRY_AFTER:g}s)")
    assert seen["refused"] == 1 and seen["ran"] == {}


@pytest.mark.slow
async def test_when_every_retry_is_refused_the_error_names_the_status_and_the_attempts(tmp_path):
    async with busy_server(tmp_path, 504, "--times", "5", retries=1) as (host, base):
        _, result = await timed(host, "busy_lookup", {"key": "k"})
        seen = await hits(base)
    text = result.content[0].text
    assert result.is_error and "504 Gateway Timeout" in text and text.endswith("(after 2 attempts)")
    assert seen == {"refused": 2, "ran": {}}


def test_retry_after_is_read_as_seconds_or_as_an_http_date():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: at once
    assert 50 < parse_retry_after(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))) <= 60
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
