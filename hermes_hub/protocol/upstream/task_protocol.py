"""The task methods on the wire, for both eras: which ``tools/call`` becomes a task, and
``tasks/get``, ``tasks/update``, ``tasks/result``, ``tasks/cancel``, ``tasks/list``.

- 2025-11-25 hosts (the handshake era's tasks, which the SDK no longer runs): the host asks with the
  ``task`` field of ``tools/call`` (every tool is listed with ``execution.taskSupport: optional``) and
  gets ``{"task": ...}``; a question the call asks (an elicitation) moves the task to
  ``input_required`` and is pushed on the stream of the host's ``tasks/result`` request, which
  blocks until the task ends and answers with the call's own result.
- 2026-07-28 hosts (the ``io.modelcontextprotocol/tasks`` extension): a host that declares the
  extension gets a task, at the hub's choice, for a tool listed as task-capable (``hermes_agent_run``,
  and the tools of servers that mark theirs), and for a call the hub has parked (a bridged
  elicitation, see ``bridge.py``); a question shows in ``tasks/get`` as ``inputRequests``, answered
  with ``tasks/update``; ``tasks/get`` of an ended task carries its ``result`` or ``error``.

The call itself runs through the same handler pipeline as any ``tools/call`` (``call_next``), in the
board's task group, with a session that turns its progress into the task's status message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from hermes_hub.infra.bridge import STATE_PREFIX
from hermes_hub.infra.call import HostChannel, Identity, acting_as
from hermes_hub.protocol.upstream.tasks import HostTask, TaskBoard, task_fields

Ctx = ServerRequestContext[Any]
EXTENSION_ID = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
LEGACY_VERSION = "2025-11-25"  # the one handshake-era version with tasks
LEGACY_CAPABILITY = types.ServerTasksCapability(
    list=types.TasksListCapability(), cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability())))


class TaskIdParams(types.RequestParams):
    task_id: str = Field(max_length=200)


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(default_factory=dict, max_length=100)


def speaks_tasks(ctx: Ctx) -> bool:
    """A 2026-07-28 request that declared the tasks extension in its capabilities."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    caps = ctx.session.client_capabilities
    return bool(caps and isinstance((caps.extensions or {}).get(EXTENSION_ID), dict))


def with_task_support(tools: list[types.Tool]) -> list[types.Tool]:
    """A 2025-11-25 listing: every tool may run as a task (the hub holds it) unless its server said no."""
    optional = types.ToolExecution(task_support="optional")
    return [t if t.execution and t.execution.task_support else t.model_copy(update={"execution": optional})
            for t in tools]


class TaskSession:
    """The call's session while it runs as a task: progress becomes the task's status message (and
    still reaches the host while it is connected); a request pushed to a 2025-11-25 host waits for
    one of its ``tasks/result`` requests and rides that request's stream."""

    def __init__(self, inner: Any, task: HostTask) -> None:
        self._inner, self._task = inner, task

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None,
                              **kwargs: Any) -> None:
        self._task.note(message or (f"{progress:g}/{total:g}" if total else f"{progress:g}"))
        try:
            await self._inner.report_progress(progress, total, message, **kwargs)
        except Exception:  # noqa: BLE001 - the host's request is long answered; the poll shows it
            pass

    async def send_log_message(self, *args: Any, **kwargs: Any) -> None:
        try:
            await self._inner.send_log_message(*args, **kwargs)
        except Exception:  # noqa: BLE001 - as above
            pass

    def channel(self, caps: types.ClientCapabilities, key: Any) -> HostChannel:
        """How the call asks a 2026-07-28 host something: the question waits in the task (tasks/get shows
        it as ``inputRequests``) until the host's tasks/update answers it."""

        async def ask(request: Any, result_type: Any) -> Any:
            key = f"q{len(self._task.asked) + 1}"
            answers = await self._task.ask({key: request.model_dump(by_alias=True, mode="json", exclude_none=True)})
            return result_type.model_validate(answers[key])

        async def elicit(params: types.ElicitRequestParams) -> types.ElicitResult:
            return await ask(types.ElicitRequest(params=params), types.ElicitResult)

        async def sample(params: types.CreateMessageRequestParams) -> Any:
            wanted = types.CreateMessageResultWithTools if params.tools or params.tool_choice else \
                types.CreateMessageResult
            return await ask(types.CreateMessageRequest(params=params), wanted)

        return HostChannel(elicit=elicit if caps.elicitation else None, sample=sample if caps.sampling else None,
                           key=key, why_not="the calling host did not declare it can answer that")

    async def send_request(self, request: Any, result_type: Any, **kwargs: Any) -> Any:
        task = self._task
        key = f"q{len(task.asked) + 1}"
        task.asked.add(key)
        task.set("input_required", "waiting for your answer (call tasks/result)",
                 input_requests={**task.input_requests, key: request.model_dump(by_alias=True, mode="json",
                                                                              exclude_none=True)})
        try:
            while not task.pushers:
                await task.changed.wait()
            session, request_id = task.pushers[-1]
            params = request.params.model_copy(update={"meta": {**(request.params.meta or {}),
                                                                RELATED_TASK: {"taskId": task.task_id}}})
            return await session.send_request(request.model_copy(update={"params": params}), result_type,
                                              metadata=ServerMessageMetadata(related_request_id=request_id))
        finally:
            task.input_requests = {k: v for k, v in task.input_requests.items() if k != key}
            if not task.input_requests:
                task.set("working", "working")


class TaskProtocol:
    """Server middleware (``tools/call`` as a task) and the ``tasks/*`` handlers, over one ``TaskBoard``."""

    def __init__(self, board: TaskBoard, identify: Callable[[Ctx], Identity],
                 task_support: Callable[[str], str | None]) -> None:
        self.board, self.identify, self.task_support = board, identify, task_support

    def install(self, server: Any) -> None:
        server.middleware.append(self)
        server.extensions[EXTENSION_ID] = {}
        server.add_request_handler("tasks/get", TaskIdParams, self.get)
        server.add_request_handler("tasks/update", UpdateParams, self.update)
        server.add_request_handler("tasks/result", TaskIdParams, self.result)
        server.add_request_handler("tasks/cancel", TaskIdParams, self.cancel)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self.list)

    # -- tools/call --------------------------------------------------------------------------

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not isinstance(ctx.params, dict):
            return await call_next(ctx)
        params = dict(ctx.params)
        if ctx.protocol_version == LEGACY_VERSION and isinstance(params.get("task"), dict):
            ttl = params.pop("task").get("ttl")
            task = await self._start(ctx, call_next, params, ttl if isinstance(ttl, int) else None)
            return {"task": task_fields(task, "2025")}
        if not speaks_tasks(ctx):
            return await call_next(ctx)
        if self.task_support(str(params.get("name", ""))) in ("optional", "required"):
            task = await self._start(ctx, call_next, params, None)
            return {"resultType": "task", **task_fields(task, "2026")}
        out = await call_next(ctx)
        if not isinstance(out, dict) or out.get("resultType") != "input_required":
            return out
        if str(out.get("requestState")).startswith(STATE_PREFIX):
            task = await self._start(ctx, call_next, params, None, first=out)  # a parked call: now a task
            return {"resultType": "task", **task_fields(task, "2026")}
        return out

    async def _start(self, ctx: Ctx, call_next: CallNext, params: dict[str, Any], ttl_ms: int | None,
                     first: dict[str, Any] | None = None) -> HostTask:
        owner = self.identify(ctx)

        async def run(task: HostTask) -> dict[str, Any]:
            call = dataclasses.replace(ctx, params=params, session=TaskSession(ctx.session, task))
            # the board runs it outside the transport that named the caller (stdio, in-process): name it again
            with acting_as(owner):
                out = first if first is not None else await call_next(call)
                while isinstance(out, dict) and out.get("resultType") == "input_required":  # 2026: rounds via the task
                    answers = await task.ask(out.get("inputRequests") or {})
                    retry = {**params, "inputResponses": answers, "requestState": out.get("requestState")}
                    out = await call_next(dataclasses.replace(call, params=retry))
            return out

        return await self.board.start(owner, ttl_ms, run)

    # -- tasks/* -----------------------------------------------------------------------------

    def _era(self, ctx: Ctx) -> str:
        return "2026" if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else "2025"

    async def get(self, ctx: Ctx, params: TaskIdParams) -> dict[str, Any]:
        task = self.board.get(self.identify(ctx), params.task_id)
        out = task_fields(task, self._era(ctx))
        if self._era(ctx) == "2026":
            if task.status == "input_required":
                out["inputRequests"] = dict(task.input_requests)
            elif task.status == "completed":
                out["result"] = task.result
            elif task.status == "failed":
                out["error"] = task.error
        return out

    async def update(self, ctx: Ctx, params: UpdateParams) -> dict[str, Any]:
        self.board.get(self.identify(ctx), params.task_id).answer(params.input_responses)
        return {}

    async def cancel(self, ctx: Ctx, params: TaskIdParams) -> dict[str, Any]:
        task = self.board.cancel(self.identify(ctx), params.task_id)
        return task_fields(task, "2025") if self._era(ctx) == "2025" else {}

    async def list(self, ctx: Ctx, params: types.PaginatedRequestParams) -> dict[str, Any]:
        return {"tasks": [task_fields(t, self._era(ctx)) for t in self.board.mine(self.identify(ctx))]}

    async def result(self, ctx: Ctx, params: TaskIdParams) -> dict[str, Any]:
        """2025-11-25: wait for the end (carrying the call's questions meanwhile), then its own answer."""
        task = self.board.get(self.identify(ctx), params.task_id)
        pusher = (ctx.session, ctx.request_id)
        task.pushers.append(pusher)
        task.changed.set()  # wake a question waiting for a stream to ride
        task.changed = anyio.Event()
        try:
            await task.done.wait()
        finally:
            task.pushers.remove(pusher)
        if task.status == "completed" and task.result is not None:
            meta = {**(task.result.get("_meta") or {}), RELATED_TASK: {"taskId": task.task_id}}
            return {**task.result, "_meta": meta}
        if task.status == "failed" and task.error:
            raise MCPError(task.error.get("code", types.INTERNAL_ERROR), task.error.get("message", "failed"),
                           task.error.get("data"))
        raise MCPError(types.INVALID_PARAMS, f"task {task.task_id!r} was cancelled; it has no result")
