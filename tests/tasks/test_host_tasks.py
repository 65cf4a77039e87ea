"""Tools as tasks, host side, on an in-memory pair: a 2025-11-25 host asks with the ``task`` field, a
2026-07-28 host that declares the tasks extension gets one for an agent run; progress, questions,
results, cancellation and expiry travel through the task."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError

from hermes_hub import Hub
from tests.support import toy, until
from tests.tasks.host import send, start, tasks_host, until_status

pytestmark = pytest.mark.anyio

RULES = [
    {"when": "say hello through the tool", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "hello"}}]},
    {"when": "^hello$", "text": "The tool said hello."},
    {"when": "delete it", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "deleted"}}]},
    {"when": "^deleted$", "text": "Done: deleted."},
    {"when": "The person declined", "text": "OK, I left it alone."},
    {"when": "take your time", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 60}}]},
]


def write_hub(tmp_path, **hub: Any) -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"toy": toy()}, "hub": hub,
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {"careful": {"instructions": "Ask before acting.", "confirm": ["toy_echo"]}},
    }))
    return str(cfg)


@pytest.fixture(scope="module")
async def hub(tmp_path_factory):
    async with Hub.from_file(write_hub(tmp_path_factory.mktemp("hub"))) as hub:  # one hub for the module
        assert await hub.wait_settled(30)
        yield hub


async def test_a_2025_host_runs_any_tool_as_a_task_and_reads_its_result_with_tasks_result(hub):
    async with hub.client(mode="legacy") as host:
        assert host.server_capabilities.tasks.requests.tools.call is not None
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert listed["toy_echo"].execution.task_support == "optional"
        with anyio.fail_after(60):
            task = await start(host, "toy_echo", {"text": "later"}, ttl=10_000_000)
            assert (task["status"], task["ttl"]) == ("working", 3_600_000)  # capped at hub.task_ttl
            result = await send(host, "tasks/result", taskId=task["taskId"])
            done = await send(host, "tasks/get", taskId=task["taskId"])
            listing = await send(host, "tasks/list")
            with pytest.raises(MCPError) as ended:
                await send(host, "tasks/cancel", taskId=task["taskId"])
            with pytest.raises(MCPError) as unknown:
                await send(host, "tasks/get", taskId="nope")
    assert result["content"] == [{"type": "text", "text": "later"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert done["status"] == "completed" and "result" not in done
    assert task["taskId"] in [t["taskId"] for t in listing["tasks"]]
    assert (ended.value.code, ended.value.message) == (-32602, f"task {task['taskId']!r} already ended (completed); "
                                                                "nothing to cancel")
    assert "unknown task id 'nope'" in unknown.value.message


async def test_a_2026_host_gets_a_task_for_an_agent_run_and_a_plain_result_for_a_quick_tool(hub):
    async with tasks_host(hub) as host:
        quick = await host.session.call_tool("toy_echo", {"text": "now"}, allow_claimed=True)
        task = await start(host, "hermes_agent_run", {"task": "please say hello through the tool"})
        done = await until_status(host, task["taskId"], {"completed", "failed", "cancelled"})
    assert quick.content[0].text == "now"
    assert (task["status"], task["ttlMs"], task["pollIntervalMs"]) == ("working", 3_600_000, 500)
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"]["answer"] == "The tool said hello."


@pytest.mark.parametrize("allow, answer", [(True, "Done: deleted."), (False, "OK, I left it alone.")])
async def test_a_2026_agent_task_asks_its_confirmation_through_the_task_and_goes_on_with_the_answer(hub, allow,
                                                                                                 answer):
    async def unused(ctx: Any, params: Any) -> Any:  # advertises elicitation; answers go through tasks/update
        raise AssertionError("a task's question is read from tasks/get, not pushed")

    async with tasks_host(hub, elicitation_callback=unused) as host:
        task = await start(host, "hermes_agent_run", {"task": "delete it", "profile": "careful"})
        asking = await until_status(host, task["taskId"], {"input_required", "completed", "failed"})
        assert asking["status"] == "input_required", asking
        (key, question), = asking["inputRequests"].items()
        await send(host, "tasks/update", taskId=task["taskId"], inputResponses={
            key: {"action": "accept", "content": {"allow": allow}}, "q-never-asked": {"action": "decline"}})
        done = await until_status(host, task["taskId"], {"completed", "failed", "cancelled"})
    assert question["method"] == "elicitation/create"
    assert "toy_echo" in question["params"]["message"]
    assert done["result"]["structuredContent"]["answer"] == answer
    assert hub.agent_bridge._pending == {}  # nothing left parked


async def test_a_2025_agent_task_pushes_its_confirmation_on_the_tasks_result_stream(hub):
    asked: list[Any] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"allow": True})

    async with hub.client(mode="legacy", elicitation_callback=on_elicit) as host:
        with anyio.fail_after(60):
            task = await start(host, "hermes_agent_run", {"task": "delete it", "profile": "careful"})
            await until_status(host, task["taskId"], {"input_required"})
            result = await send(host, "tasks/result", taskId=task["taskId"])
    assert result["structuredContent"]["answer"] == "Done: deleted."
    assert asked[0].meta["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_cancelled_agent_task_stops_its_run_and_reads_cancelled(hub, mode):
    async with hub.client(mode=mode) if mode == "legacy" else tasks_host(hub) as host:
        task = await start(host, "hermes_agent_run", {"task": f"take your time ({mode})"})
        working = await until(lambda: send(host, "tasks/get", taskId=task["taskId"]), 60)
        await until(lambda: _says(host, task["taskId"], "calling toy_sleep"), 60)
        cancelled = await send(host, "tasks/cancel", taskId=task["taskId"])
        after = await send(host, "tasks/get", taskId=task["taskId"])
    assert working["status"] == "working"
    assert after["status"] == "cancelled"
    cancelled.pop("_meta", None)
    assert cancelled == ({**task, "status": "cancelled", "statusMessage": "cancelled by the caller",
                          "lastUpdatedAt": cancelled["lastUpdatedAt"]} if mode == "legacy" else {"resultType": "complete"})
    run = await until(lambda: _run_of(hub, f"take your time ({mode})"), 30)
    assert run.stop_reason == "cancelled"


async def _run_of(hub: Hub, task: str) -> Any:
    return next((r for r in await hub.store.list_runs(hub.local.user_id, limit=50) if r.task == task), None)


async def _says(host: Client, task_id: str, words: str) -> bool:
    return words in ((await send(host, "tasks/get", taskId=task_id)).get("statusMessage") or "")


async def test_a_task_past_the_ttl_its_host_asked_for_is_gone(hub):
    async with hub.client(mode="legacy") as host:
        task = await start(host, "toy_echo", {"text": "brief"}, ttl=300)
        await send(host, "tasks/result", taskId=task["taskId"])

        async def gone() -> bool:
            try:
                await send(host, "tasks/get", taskId=task["taskId"])
            except MCPError as e:
                return "unknown task id" in e.message
            return False

        assert await until(gone, 30)


async def test_a_call_the_hub_parks_for_a_2026_host_is_a_task_whose_question_tasks_update_answers(hub):
    async def unused(ctx: Any, params: Any) -> Any:
        raise AssertionError("a task's question is read from tasks/get, not pushed")

    async with tasks_host(hub, elicitation_callback=unused) as host:  # toy pushes; the bridge parks it
        task = await start(host, "toy_confirm", {"question": "Go on?"})
        asking = await until_status(host, task["taskId"], {"input_required", "completed", "failed"})
        (key, question), = asking["inputRequests"].items()
        await send(host, "tasks/update", taskId=task["taskId"], inputResponses={
            key: {"action": "accept", "content": {"ok": True}}})
        done = await until_status(host, task["taskId"], {"completed", "failed", "cancelled"})
    assert question["params"]["message"] == "Go on?"
    assert done["result"]["content"] == [{"type": "text", "text": "accept: True"}]
