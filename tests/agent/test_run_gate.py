"""agent.max_concurrent: at most that many runs execute at once per hub; the others wait their turn with
a progress message, fairly across users, and a waiting run can be cancelled."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.core.agent.gate import RunGate
from tests.support import Progress, serve_process, toy, until

pytestmark = pytest.mark.anyio

RULES = [
    {"when": "take a while", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 3}}]},
    {"when": "slept 3", "text": "Done after a while."},
    {"when": "quick one", "text": "Quick answer."},
]


@pytest.mark.slow
async def test_a_run_past_max_concurrent_waits_with_a_message_and_can_be_cancelled_while_waiting(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    config = {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
              "agent": {"provider": "scripted", "script": "model.json", "max_concurrent": 1}}
    heard = Progress()

    async with serve_process(config, tmp_path) as served:
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host, \
                    Client(streamable_http_client(served.url)) as second:
                async def gate() -> dict[str, Any]:
                    return (await host.call_tool("hermes_hub_status", {})).structured_content["agent_runs"]

                first: dict[str, Any] = {}

                async def long_run() -> None:
                    first.update((await host.call_tool("hermes_agent_run", {"task": "take a while"})
                                  ).structured_content)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(long_run)
                    await until(lambda: _is(gate, running=1), timeout=30)
                    with anyio.CancelScope() as waiting:
                        async def give_up_once_queued() -> None:
                            await until(lambda: _is(gate, waiting=1), timeout=30)
                            await until(lambda: any("waiting for a free run slot" in m for m in heard), timeout=30)
                            waiting.cancel()  # the host gives up: the SDK sends notifications/cancelled

                        tg.start_soon(give_up_once_queued)
                        await second.call_tool("hermes_agent_run", {"task": "quick one"},
                                               progress_callback=heard)
                    await until(lambda: _is(gate, waiting=0), timeout=30)
                    assert first == {}  # the first run is still going: the cancelled one left the queue
                quick = (await host.call_tool("hermes_agent_run", {"task": "quick one"})).structured_content
                runs = (await host.call_tool("hermes_trace_list", {})).structured_content["runs"]
                idle = await gate()
    assert first["answer"] == "Done after a while." and quick["answer"] == "Quick answer."
    assert [m for m in heard if "waiting" in m] == [
        "waiting for a free run slot (0 waiting ahead; agent.max_concurrent is 1)"]
    assert [r["task"] for r in runs] == ["quick one", "take a while"]  # the cancelled run never started
    assert idle == {"running": 0, "waiting": 0, "max_concurrent": 1}


async def _is(gate: Any, **expected: int) -> bool:
    now = await gate()
    return all(now[k] == v for k, v in expected.items())


async def test_a_freed_slot_goes_to_the_users_in_turn_not_to_the_first_users_whole_burst():
    gate = RunGate(1)
    order: list[str] = []
    release = anyio.Event()

    async def run(user: str, label: str, hold: anyio.Event | None = None) -> None:
        async def waiting(ahead: int) -> None:
            queued.append(label)

        async with gate.slot(user, waiting):
            order.append(label)
            if hold is not None:
                await hold.wait()

    queued: list[str] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "alice", "a1", release)
            await until(lambda: order == ["a1"], timeout=5, every=0.001)
            for label in ("a2", "a3", "a4"):
                tg.start_soon(run, "alice", label)
                await until(lambda n=label: n in queued, timeout=5, every=0.001)
            tg.start_soon(run, "bob", "b1")
            await until(lambda: "b1" in queued, timeout=5, every=0.001)
            release.set()
    assert order == ["a1", "a2", "b1", "a3", "a4"]
    assert gate.counts() == {"running": 0, "waiting": 0, "max_concurrent": 1}
