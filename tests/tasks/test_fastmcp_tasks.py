"""A real tasks server behind the hub: FastMCP with ``fastmcp-tasks`` (interop/tasks-server.py, its own
venv), over stdio and streamable HTTP. The hub declares the tasks extension to it and follows the
server's task to its end, its questions included (pushed to a handshake-era host, waiting in the hub's
task for a host that speaks tasks); cancelling the hub's task cancels the server's task."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import load_config
from tests.support import PROJECT, free_port, process, wait_port
from tests.tasks.host import send, start, tasks_host, until_status

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PYTHON = PROJECT / "interop" / ".venv-tasks" / "bin" / "python"
SERVER = PROJECT / "interop" / "tasks-server.py"


@pytest.fixture(params=["stdio", "http"])
async def crunchy(request, tmp_path):
    """hub.json's entry for the FastMCP tasks server: a stdio child, or a process serving HTTP."""
    if not PYTHON.exists():
        pytest.fail("interop/.venv-tasks is missing: run `bash interop/install.sh`", pytrace=False)
    # timeout 1: a call the server held open for 2.5 s without progress would time out; its task does not
    entry: dict[str, Any] = {"timeout": 1, "mode": "2026-07-28"}  # the tasks extension is a 2026-07-28 one
    if request.param == "stdio":
        yield {"command": str(PYTHON), "args": [str(SERVER)], **entry}
        return
    port = free_port()
    with process([str(PYTHON), str(SERVER), "--port", str(port)], tmp_path / "crunchy.log") as proc:
        with anyio.fail_after(60):
            await wait_port(port, proc, tmp_path / "crunchy.log")
        yield {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", **entry}


async def test_a_fastmcp_task_runs_through_the_hub_for_hosts_of_both_eras_and_cancels(crunchy, tmp_path):
    config = {"mcpServers": {"crunchy": crunchy}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}}
    with anyio.fail_after(90):
        async with Hub(_load(config, tmp_path)) as hub:
            assert await hub.wait_settled(60)
            async with hub.client(mode="legacy", elicitation_callback=yes) as legacy:  # no tasks: plain
                plain = await legacy.call_tool("crunchy_crunch", {"dataset": "a", "seconds": 2.5})
                pushed = await legacy.call_tool("crunchy_approve", {"item": "plan"})  # its question: pushed
            async with tasks_host(hub, elicitation_callback=unused) as host:
                asks = await start(host, "crunchy_approve", {"item": "budget"})
                asking = await until_status(host, asks["taskId"], {"input_required", "completed", "failed"})
                (key, question), = asking["inputRequests"].items()
                await send(host, "tasks/update", taskId=asks["taskId"], inputResponses={
                    key: {"action": "accept", "content": {"ok": True}}})
                approved = await until_status(host, asks["taskId"], {"completed", "failed", "cancelled"})
                task = await start(host, "crunchy_crunch", {"dataset": "b", "seconds": 2.5})
                done = await until_status(host, task["taskId"], {"completed", "failed", "cancelled"})
                long = await start(host, "crunchy_crunch", {"dataset": "c", "seconds": 60})
                await until_status(host, long["taskId"], {"working"})
                await send(host, "tasks/cancel", taskId=long["taskId"])
                after = await send(host, "tasks/get", taskId=long["taskId"])
            async with hub.client(mode="legacy") as legacy:  # the server serves on after the cancel
                still = await legacy.call_tool("crunchy_crunch", {"dataset": "d", "seconds": 0})
    assert not plain.is_error and plain.content[0].text == "crunched a"
    assert pushed.content[0].text == "plan: accept True"
    assert question["params"]["message"] == "Approve budget?"
    assert approved["result"]["content"] == [{"type": "text", "text": "budget: accept True"}]
    assert done["status"] == "completed", done
    assert done["result"]["content"] == [{"type": "text", "text": "crunched b"}]
    assert after["status"] == "cancelled"
    assert still.content[0].text == "crunched d"


async def yes(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def unused(ctx: Any, params: Any) -> Any:  # advertises elicitation; a task's questions go by tasks/update
    raise AssertionError("a task's question is read from tasks/get, not pushed")


def _load(config: dict[str, Any], tmp_path) -> Any:
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(config))
    return load_config(path)
