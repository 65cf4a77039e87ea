"""Issue 30, item 12: one user cannot hold any number of live streams open. A plain token user opens
followers of ``/events?follow=1`` and ``/status/stream`` on the served hub until ``hub.max_followers``
(8 by default, counted across both); the next one, of either kind, gets 429 with Retry-After and a sentence
saying what to do, while another user still follows and her open streams still deliver. A follower that
disconnects frees its place."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import pytest

from tests.support import as_user, serve_process, until

pytestmark = pytest.mark.anyio
ANA, BOB = "ana-static-token-0123456789", "bob-static-token-0123456789"
CONFIG = {"mcpServers": {}, "memory": {"embedder": "none"},
          "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"}]}}
FULL = ("user 'ana' already follows 8 live streams (/events, /status/stream), the most hub.max_followers (8) "
        "allows; close one (a status page tab, an /events?follow=1 reader) and try again, or ask the hub's admin "
        "to raise hub.max_followers in hub.json")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def follow(stack: AsyncExitStack, http: httpx2.AsyncClient, base: str, path: str, token: str) -> Any:
    """A stream held open until ``stack`` closes, past its first comment (so the hub holds it)."""
    response = await stack.enter_async_context(http.stream("GET", f"{base}{path}", headers=bearer(token)))
    if response.status_code == 200:
        lines = response.aiter_lines()
        assert (await anext(lines)).startswith((": following", "retry:"))
        response.lines = lines  # type: ignore[attr-defined]
    else:
        await response.aread()
    return response


async def first_event(lines: Any) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data: "):
            return json.loads(line.removeprefix("data: "))
    raise AssertionError("the stream ended")


async def test_one_user_holds_at_most_max_followers_streams_and_a_closed_one_frees_its_place(tmp_path):
    paths = ["/events?follow=1", "/status/stream"] * 4
    async with serve_process(CONFIG, tmp_path) as served:
        base = served.url.removesuffix("/mcp")
        limits = httpx2.Limits(max_connections=40)
        async with httpx2.AsyncClient(timeout=30, limits=limits) as http, AsyncExitStack() as held:
            with anyio.fail_after(60):
                first = await follow(held, http, base, paths[0], ANA)
                async with AsyncExitStack() as last:  # the eighth, closed below
                    opened = [first] + [await follow(held, http, base, p, ANA) for p in paths[1:-1]]
                    opened.append(await follow(last, http, base, paths[-1], ANA))
                    refused = [await follow(held, http, base, p, ANA) for p in ("/events?follow=1", "/status/stream")]
                    bobs = await follow(held, http, base, "/events?follow=1", BOB)
                    async with as_user(served.url, ANA) as ana:  # her streams still deliver
                        await ana.call_tool("hermes_session_list", {})
                        seen = await first_event(first.lines)
                # the eighth is gone: a new follower gets its place once the hub has seen it go
                async def admitted() -> Any:
                    response = await follow(held, http, base, "/status/stream", ANA)
                    return response if response.status_code == 200 else None

                again = await until(admitted, timeout=20, every=0.1)
                full_again = await follow(held, http, base, "/events?follow=1", ANA)
    assert [r.status_code for r in opened] == [200] * 8
    for r in refused:
        assert r.status_code == 429 and r.headers["retry-after"] == "10"
        assert r.json() == {"error": "too_many_requests", "error_description": FULL}
    assert bobs.status_code == 200
    assert seen["type"] == "ToolCallRequested" and seen["user_id"] == "ana"
    assert again.status_code == 200 and full_again.status_code == 429
