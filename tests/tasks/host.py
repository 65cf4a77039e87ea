"""A host that speaks tasks, written from the spec texts (not from the hub's code): the 2025-11-25
``task`` field and ``tasks/*`` methods, and the 2026 ``io.modelcontextprotocol/tasks`` extension."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict

EXTENSION_ID = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


class Loose(types.Result):
    model_config = ConfigDict(extra="allow")


class Created(types.Result):
    """A 2026 CreateTaskResult: ``resultType: "task"`` and the Task's fields."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"


class TaskParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")


class TaskRequest(types.Request[TaskParams, str]):
    method: str
    params: TaskParams


async def _never(claim: Created, ctx: ClaimContext) -> types.CallToolResult:
    raise AssertionError("the test reads the task itself (allow_claimed=True)")


class SpeaksTasks(ClientExtension):
    identifier = EXTENSION_ID

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=Created, resolve=_never)]


def tasks_host(target: Any, **kwargs: Any) -> Any:
    """A 2026-07-28 host that declares the tasks extension on every request: of a served hub's URL, or of
    an in-process ``Hub`` as its local user."""
    if hasattr(target, "client"):
        return target.client(extensions=[SpeaksTasks()], **kwargs)
    return Client(target, extensions=[SpeaksTasks()], **kwargs)


async def send(host: Client, method: str, **params: Any) -> dict[str, Any]:
    """``tasks/*`` on either era (params in wire names); the result as a dict."""
    out = await host.session.send_request(TaskRequest(method=method, params=TaskParams(**params)), Loose)
    return out.model_dump(by_alias=True, exclude_none=True)


async def start(host: Client, name: str, arguments: dict[str, Any], ttl: int | None = None) -> dict[str, Any]:
    """Start ``name`` as a task: the handshake era's ``task`` field, or the 2026 extension's result claim."""
    if host.protocol_version == "2026-07-28":
        out = await host.session.call_tool(name, arguments, allow_claimed=True)
        assert isinstance(out, Created), f"no task: {out}"
        return out.model_dump(by_alias=True, exclude_none=True)
    task = {} if ttl is None else {"ttl": ttl}
    raw = await host.session._dispatcher.send_raw_request(  # the SDK's typed path would read a CallToolResult
        "tools/call", {"name": name, "arguments": arguments, "task": task}, {})
    return raw["task"]


async def until_status(host: Client, task_id: str, wanted: set[str], timeout: float = 60) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        while True:
            got = await send(host, "tasks/get", taskId=task_id)
            if got["status"] in wanted:
                return got
            await anyio.sleep(0.05)  # polling interval; the bound is fail_after's
