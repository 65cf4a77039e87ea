"""Issue 30, item 7: a downstream answer is never read whole before it is cut.

A served ``hermes-hub serve`` fronts a stdio server (``tests/fixtures/flood_server.py``) that answers
three calls at once with 200 MB each (one writing its id last), and another call with a line that never
ends; then a streamable-HTTP server (``flood_http_server.py``) that answers with a 200 MB JSON body and
a 200 MB SSE event. Each such call fails with a sentence naming the server and ``hub.max_message_bytes``,
the next call to the same server works, ``/healthz`` answers throughout, and the hub's peak memory
(VmHWM, read from /proc) stays far below one answer: the answer is dropped as it streams.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError

from bench.fuzz_bounds import watched
from tests.support import PROJECT, as_user, free_port, process, serve_process, until, wait_port

pytestmark = pytest.mark.anyio
ROOT = "root-flood-token-000000000000"
PEAK_MB = 300  # three 200 MB answers read whole took the hub past 1 GB
TOO_BIG = ("server '{}': answered with a message of more than 4,000,000 bytes (hub.max_message_bytes); "
           "the answer was dropped. Make the tool return less (a resource link, say), or raise "
           "hub.max_message_bytes in hub.json")


def config(**servers: Any) -> dict[str, Any]:
    return {"mcpServers": servers, "memory": {"embedder": "none"},
            "auth": {"tokens": [{"token": ROOT, "user": "root", "role": "admin"}]}}


def flood_stdio() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "tests.fixtures.flood_server"], "cwd": str(PROJECT),
            "timeout": 60}


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def refusal(host: Any, tool: str, arguments: dict[str, Any]) -> str:
    """The sentence the hub answers a call with when it fails (an error result or a JSON-RPC error)."""
    try:
        result = await host.call_tool(tool, arguments)
    except MCPError as e:
        return e.message
    assert result.is_error, result.content
    return result.content[0].text


async def small_works(host: Any, tool: str) -> bool:
    try:
        result = await host.call_tool(tool, {})
    except MCPError:
        return False
    return not result.is_error and result.content[0].text == "small ok"


async def floods(host: Any, tool: str, variants: list[dict[str, Any]]) -> list[str]:
    """The refusals of 200 MB answers asked of ``tool`` all at once, one per variant of its arguments."""
    said: list[str] = []

    async def flood(variant: dict[str, Any]) -> None:
        said.append(await refusal(host, tool, {"mb": 200, **variant}))

    async with anyio.create_task_group() as tg:
        for variant in variants:
            tg.start_soon(flood, variant)
    return said


def assert_stayed_small(w: Any, peak: float) -> None:
    """/healthz answered all along, quickly, and the hub's peak memory stayed far below one answer."""
    assert w.probes > 0 and w.unanswered == 0 and w.healthz_max_s < 2.0, w
    assert peak < PEAK_MB, f"the hub's peak memory was {peak:.0f} MB"


async def test_three_200_mb_stdio_answers_fail_their_calls_while_the_hub_stays_small_and_answering(tmp_path):
    async with serve_process(config(flood=flood_stdio()), tmp_path) as served:
        async with as_user(served.url, ROOT) as root, watched(served.url.removesuffix("/mcp"), served.proc.pid) as w:
            with anyio.fail_after(90):
                said = await floods(root, "flood_flood", [{"id_last": False}, {"id_last": True}, {"id_last": False}])
                assert await small_works(root, "flood_small")  # the same connection, still usable
        peak = peak_mb(served.proc.pid)
    print(f"stdio: hub VmHWM {peak:.0f} MB, /healthz max {w.healthz_max_s:.2f} s over {w.probes} probes")
    assert len(said) == 3 and all(s == TOO_BIG.format("flood") for s in said), said
    assert_stayed_small(w, peak)


@pytest.mark.slow
async def test_an_endless_stdio_line_fails_its_call_and_the_server_is_restarted(tmp_path):
    async with serve_process(config(flood=flood_stdio()), tmp_path) as served:
        async with as_user(served.url, ROOT) as root, watched(served.url.removesuffix("/mcp"), served.proc.pid) as w:
            with anyio.fail_after(90):
                said = await refusal(root, "flood_endless", {})
                await until(lambda: small_works(root, "flood_small"), timeout=60, every=0.5)
        peak = peak_mb(served.proc.pid)
    print(f"endless: hub VmHWM {peak:.0f} MB, /healthz max {w.healthz_max_s:.2f} s over {w.probes} probes")
    assert said == TOO_BIG.format("flood"), said  # at once, as the line passed the limit
    assert_stayed_small(w, peak)


@pytest.mark.slow
async def test_200_mb_http_answers_as_json_or_as_one_sse_event_fail_their_calls_and_the_hub_stays_small(tmp_path):
    port = free_port()
    argv = [sys.executable, "-m", "tests.fixtures.flood_http_server", "--port", str(port)]
    with process(argv, tmp_path / "flood-http.log") as server:
        with anyio.fail_after(30):
            await wait_port(port, server, tmp_path / "flood-http.log")
        remote = {"url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy", "timeout": 60}
        async with serve_process(config(web=remote), tmp_path) as served:
            async with as_user(served.url, ROOT) as root, \
                    watched(served.url.removesuffix("/mcp"), served.proc.pid) as w:
                with anyio.fail_after(90):
                    said = await floods(root, "web_flood", [{"sse": False}, {"sse": True}, {"sse": False}])
                    assert await small_works(root, "web_small")  # the same session, still usable
            peak = peak_mb(served.proc.pid)
    print(f"http: hub VmHWM {peak:.0f} MB, /healthz max {w.healthz_max_s:.2f} s over {w.probes} probes")
    assert len(said) == 3 and all(s == TOO_BIG.format("web") for s in said), said
    assert_stayed_small(w, peak)
