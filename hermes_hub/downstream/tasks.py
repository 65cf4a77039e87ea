"""A server's tasks (the ``io.modelcontextprotocol/tasks`` extension, 2026-07-28), driven by the hub.

Every downstream ``Client`` declares the extension, so a server that runs a tool as a task (a FastMCP
server with ``fastmcp-tasks``) answers ``tools/call`` with a task instead of making the hub hold a
request open. The hub then polls the task (``tasks/get``, at the server's suggested interval), and:

- the call's idle timeout (``timeout``) stops while the task runs: each answered poll shows the server
  alive, and ``max_timeout`` still bounds the call; a changed status message reaches the caller as a
  progress message (a host's own task on the hub shows it in its status);
- questions of the task (``inputRequests``) go to the caller's host like any request the server would
  have pushed, and the answers go back with ``tasks/update``;
- the end of the task is the call's result, or its error;
- a call the hub stops waiting for (the host cancelled, a timeout, its own task cancelled) cancels
  the server's task with ``tasks/cancel``.

So hosts of either era get the call's result the usual way, and a host that speaks tasks gets the hub's
own task for it (``upstream/tasks.py``). The server's task id stays between the hub and that server:
a host sees the hub's task, whose id the hub issued for that caller alone.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict, Field, TypeAdapter

from hermes_hub.downstream.relay import current_call

log = logging.getLogger("hermes_hub.downstream")
EXTENSION_ID = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_BOUNDS = (0.05, 2.0)  # seconds between polls, whatever the server suggests
MAX_QUESTIONS = 50  # input requests one task may ask in all
_ELICIT: TypeAdapter[types.ElicitRequestParams] = TypeAdapter(types.ElicitRequestParams)


class CreatedTask(types.Result):
    """A server's ``CreateTaskResult``: ``resultType: "task"`` and the task's fields."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str = Field(max_length=500)
    status: str = "working"
    poll_interval_ms: int | None = None


class _Params(types.RequestParams):
    model_config = ConfigDict(extra="allow")


class _Request(types.Request[_Params, str]):
    method: str
    params: _Params
    name_param = "taskId"  # SEP-2663: Mcp-Name carries the task id over streamable HTTP


class _Polled(types.Result):
    model_config = ConfigDict(extra="allow")
    status: str = "working"
    status_message: str | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


async def _send(session: Any, method: str, **params: Any) -> _Polled:
    return await session.send_request(_Request(method=method, params=_Params(**params)), _Polled)


async def _answer(request: dict[str, Any]) -> dict[str, Any]:
    """One of a task's questions, asked of the caller's host the way a pushed request would be."""
    call = current_call()
    host = call.ctx.host if call else None
    method = request.get("method")
    if host is not None and method == "elicitation/create" and host.elicit is not None:
        out = await host.elicit(_ELICIT.validate_python(request.get("params") or {}))
    elif host is not None and method == "sampling/createMessage" and host.sample is not None:
        out = await host.sample(types.CreateMessageRequestParams.model_validate(request.get("params") or {}))
    else:
        why = host.why_not if host is not None else "the call has no host to ask"
        raise MCPError(types.INVALID_REQUEST, f"the server's task asks a question ({method}) that cannot reach "
                       f"the calling host: {why}")
    return out.model_dump(by_alias=True, mode="json", exclude_none=True)


async def follow(created: CreatedTask, cctx: ClaimContext) -> types.CallToolResult:
    """Poll a server's task to its end: the ``CallToolResult`` the call would have returned."""
    call = current_call()
    with call.deadline.paused() if call and call.deadline else anyio.CancelScope():
        return await _follow(created, cctx, call)


async def _follow(created: CreatedTask, cctx: ClaimContext, call: Any) -> types.CallToolResult:
    session, task_id = cctx.session, created.task_id
    progress = call.ctx.progress if call else None
    answered: set[str] = set()
    interval, said = created.poll_interval_ms, None
    try:
        while True:
            await anyio.sleep(min(max((interval or 500) / 1000, POLL_BOUNDS[0]), POLL_BOUNDS[1]))
            polled = await _send(session, "tasks/get", taskId=task_id)
            interval = polled.poll_interval_ms or interval
            if progress is not None and polled.status_message and polled.status_message != said:
                await progress(0, None, polled.status_message)
            said = polled.status_message
            if polled.status == "completed" and polled.result is not None:
                return types.CallToolResult.model_validate(polled.result)
            if polled.status == "failed":
                error = polled.error or {}
                raise MCPError(int(error.get("code", types.INTERNAL_ERROR)), str(error.get("message", "task failed")),
                               error.get("data"))
            if polled.status == "cancelled":
                raise MCPError(types.INTERNAL_ERROR, f"the server cancelled its task: {polled.status_message or ''}")
            if polled.status == "input_required":
                fresh = {k: v for k, v in (polled.input_requests or {}).items() if k not in answered}
                if len(answered) + len(fresh) > MAX_QUESTIONS:
                    raise MCPError(types.INTERNAL_ERROR, f"the server's task asked more than {MAX_QUESTIONS} "
                                   f"questions; the call was cancelled")
                answers = {k: await _answer(v) for k, v in fresh.items() if isinstance(v, dict)}
                answered |= set(fresh)
                if answers:
                    await _send(session, "tasks/update", taskId=task_id, inputResponses=answers)
    except BaseException:  # we stop waiting: the server's task stops too
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if not await _ended(session, task_id):
                    await _send(session, "tasks/cancel", taskId=task_id)
            except Exception as e:  # noqa: BLE001 - the call's own error is the one to report
                log.debug("tasks/cancel of %s failed: %s", task_id[:40], e)
        raise


async def _ended(session: Any, task_id: str) -> bool:
    return (await _send(session, "tasks/get", taskId=task_id)).status in TERMINAL


class Tasks(ClientExtension):
    """The extension a downstream ``Client`` declares: a task its server returns is followed to its end."""

    identifier = EXTENSION_ID

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=follow)]


def task_capable(tools: list[types.Tool], caps: types.ServerCapabilities | None) -> list[types.Tool]:
    """A server that declares the extension may run any of its tools as a task (its choice, per call):
    its tools say ``taskSupport: optional`` unless they said otherwise, so the hub gives hosts that speak
    tasks a task of its own for them."""
    if not caps or not isinstance((caps.extensions or {}).get(EXTENSION_ID), dict):
        return tools
    optional = types.ToolExecution(task_support="optional")
    return [t if t.execution and t.execution.task_support else t.model_copy(update={"execution": optional})
            for t in tools]
