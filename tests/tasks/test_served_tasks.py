"""An agent run as a task on a real ``hermes-hub serve`` over streamable HTTP: it outlives the host that
started it (the host disconnects, comes back and reads the answer), another user cannot see, answer or
cancel it, and a cancelled one stops cleanly."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.support import serve_process, toy, until
from tests.tasks.host import send, start, tasks_host, until_status

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdefgh"
RULES = [
    {"when": "take a short break", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 1.5}}]},
    {"when": "^slept 1.5$", "text": "Rested."},
    {"when": "take your time", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 60}}]},
]


@asynccontextmanager
async def host_of(url: str, token: str) -> Any:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120))
    async with http, tasks_host(streamable_http_client(url, http_client=http)) as host:
        yield host


async def test_an_agent_task_survives_its_host_leaving_is_its_users_alone_and_cancels_cleanly(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    config = {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
              "agent": {"provider": "scripted", "script": str(tmp_path / "model.json")},
              "auth": {"tokens": [{"token": ALICE, "user": "alice"}, {"token": BOB, "user": "bob"}]}}
    async with serve_process(config, tmp_path) as served:
        with anyio.fail_after(90):
            async with host_of(served.url, ALICE) as alice:  # starts two runs, then goes away
                short = await start(alice, "hermes_agent_run", {"task": "take a short break"})
                long = await start(alice, "hermes_agent_run", {"task": "take your time"})
            async with host_of(served.url, BOB) as bob:
                refused = []
                for method, extra in (("tasks/get", {}), ("tasks/cancel", {}),
                                      ("tasks/update", {"inputResponses": {"q1": {"action": "accept"}}})):
                    with pytest.raises(MCPError) as e:
                        await send(bob, method, taskId=long["taskId"], **extra)
                    refused.append(e.value.message)
                listed = await send(bob, "tasks/list")
            async with host_of(served.url, ALICE) as alice:  # back, on a new connection
                done = await until_status(alice, short["taskId"], {"completed", "failed", "cancelled"})
                await until(lambda: _says(alice, long["taskId"], "calling toy_sleep"), 60)
                await send(alice, "tasks/cancel", taskId=long["taskId"])
                cancelled = await send(alice, "tasks/get", taskId=long["taskId"])
                runs = await until(lambda: _runs(alice, 2), 30)
    assert done["status"] == "completed" and done["result"]["structuredContent"]["answer"] == "Rested."
    assert refused == [f"unknown task id {long['taskId']!r} (it expired, or was never created for you); start the "
                       f"call again"] * 3
    assert listed["tasks"] == []
    assert cancelled["status"] == "cancelled"
    assert sorted(r["stop_reason"] for r in runs) == ["answered", "cancelled"]


async def _says(host: Any, task_id: str, words: str) -> bool:
    return words in ((await send(host, "tasks/get", taskId=task_id)).get("statusMessage") or "")


async def _runs(host: Any, n: int) -> list[dict[str, Any]] | None:
    runs = (await host.call_tool("hermes_trace_list", {})).structured_content["runs"]
    return runs if len(runs) >= n else None
