"""Tasks hosts hold on the hub: a tool call that runs on after its request has been answered.

    task = await board.start(caller, "2026", ttl_ms=None, run=lambda t: call(t))
    board.get(caller, task.task_id).wire("2026")     # what tasks/get answers

A host asks for one (a 2025-11-25 host with the ``task`` field of ``tools/call``; a 2026-07-28 host by
declaring the ``io.modelcontextprotocol/tasks`` extension, the hub deciding per tool), gets the task's
id at once, then polls it, answers its questions, cancels it or fetches its result later. The call runs
in the board's task group, which belongs to the hub, not to the host's request or connection: the task
survives its host disconnecting, and its result stays readable for ``hub.task_ttl`` seconds.

A task is its caller's (user and role): to anyone else its id answers as an unknown one does, so a
leaked id can neither read, answer nor cancel it. The wire shapes of both eras are in ``task_wire.py``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import TaskGroup
from mcp import MCPError

from hermes_hub.infra.call import Identity

TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_MS = 500  # suggested polling interval
MAX_LIVE_PER_CALLER = 100  # tasks one caller may have running at once
MAX_KEPT_PER_CALLER = 500  # ended tasks kept per caller within their ttl: past it, the oldest go first
UNKNOWN = "unknown task id {!r} (it expired, or was never created for you); start the call again"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class HostTask:
    task_id: str
    owner: Identity
    ttl_s: float
    created: float = field(default_factory=time.time)
    updated: float = 0.0
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None  # the wire result of the call (status completed)
    error: dict[str, Any] | None = None  # the JSON-RPC error of the call (status failed)
    input_requests: dict[str, Any] = field(default_factory=dict)  # outstanding questions, key -> request
    asked: set[str] = field(default_factory=set)  # every key ever asked: each is answered once
    answers: dict[str, Any] = field(default_factory=dict)  # answers not yet taken by the call
    answered: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)  # any status change (legacy waiters)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    pushers: list[Any] = field(default_factory=list)  # legacy: tasks/result requests able to carry a push

    def __post_init__(self) -> None:
        self.updated = self.created

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires(self) -> float:
        return self.created + self.ttl_s

    def set(self, status: str, message: str | None = None, **payload: Any) -> None:
        """Move to ``status``; a terminal task stays as it is (the spec's state machine)."""
        if self.terminal:
            return
        self.status, self.updated = status, time.time()
        if message is not None:
            self.message = message
        for key, value in payload.items():
            setattr(self, key, value)
        if self.terminal:
            self.input_requests = {}
            self.done.set()
        self.changed.set()
        self.changed = anyio.Event()

    def note(self, message: str) -> None:
        """Progress: the status message a poll shows (bounded: it is the call's own words)."""
        if not self.terminal:
            self.message, self.updated = message[:500], time.time()

    async def ask(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Park the call on ``requests`` (key -> wire request) until the host answers all of them."""
        fresh = {k: v for k, v in requests.items() if k not in self.asked}
        self.asked |= set(fresh)
        self.set("input_required", "waiting for your answer", input_requests={**self.input_requests, **fresh})
        wanted = set(requests)
        while not wanted <= set(self.answers):
            await self.answered.wait()
            self.answered = anyio.Event()
        out = {k: self.answers.pop(k) for k in wanted}
        self.input_requests = {k: v for k, v in self.input_requests.items() if k not in wanted}
        if not self.input_requests:
            self.set("working", "working")
        return out

    def answer(self, responses: dict[str, Any]) -> None:
        """Answers of a tasks/update: those to outstanding questions are kept, the rest ignored."""
        for key, value in responses.items():
            if key in self.input_requests and key not in self.answers:
                self.answers[key] = value
        self.answered.set()


class TaskBoard:
    """Every host's tasks of one hub. ``attach(tg)`` once the hub runs: calls run there."""

    def __init__(self, ttl_s: Callable[[], float]) -> None:
        self.ttl_s = ttl_s
        self._tasks: dict[str, HostTask] = {}
        self._tg: TaskGroup | None = None

    def attach(self, tg: TaskGroup | None) -> None:
        self._tg = tg

    def prune(self) -> None:
        now = time.time()
        for tid, task in list(self._tasks.items()):
            if task.expires <= now:
                task.scope.cancel()  # a call past its task's lifetime is not waited for any more
                del self._tasks[tid]

    async def start(self, owner: Identity, ttl_ms: int | None,
                    run: Callable[[HostTask], Awaitable[dict[str, Any]]]) -> HostTask:
        """A new working task whose ``run(task)`` (the call's wire result) runs in the hub's task group."""
        if self._tg is None:
            raise MCPError(types.INTERNAL_ERROR, "the hub is not running, so it cannot hold tasks; call without a task")
        self.prune()
        if sum(1 for t in self._tasks.values() if t.owner == owner and not t.terminal) >= MAX_LIVE_PER_CALLER:
            raise MCPError(types.INVALID_REQUEST, f"you already have {MAX_LIVE_PER_CALLER} tasks running on this "
                           f"hub; wait for some to finish or cancel them (tasks/cancel)")
        keep = self.ttl_s()
        if ttl_ms is not None and ttl_ms >= 0:
            keep = min(keep, ttl_ms / 1000)  # a host may ask for less, never more than hub.task_ttl
        ended = [t for t in self.mine(owner) if t.terminal]
        for old in ended[: max(0, len(ended) - MAX_KEPT_PER_CALLER + 1)]:
            self._tasks.pop(old.task_id, None)
        task = HostTask(secrets.token_urlsafe(16), owner, keep)
        self._tasks[task.task_id] = task

        async def expire() -> None:  # past its ttl a task is forgotten, and its call no longer waited for
            await anyio.sleep(keep)
            task.scope.cancel()
            if self._tasks.get(task.task_id) is task:
                del self._tasks[task.task_id]

        async def runner() -> None:
            try:
                with task.scope:
                    result = await run(task)
                    task.set("completed", "done", result=result)
            except MCPError as e:
                task.set("failed", e.error.message, error=e.error.model_dump(mode="json", exclude_none=True))
            except Exception:  # noqa: BLE001 - the host reads a generic error; the log has the rest
                task.set("failed", "the call failed inside the hub",
                         error={"code": types.INTERNAL_ERROR, "message": "Internal error"})
            finally:
                if not task.terminal:  # cancelled: by the host, by expiry, or by the hub stopping
                    task.set("cancelled", "the call was cancelled")

        self._tg.start_soon(runner)
        self._tg.start_soon(expire)
        return task

    def get(self, caller: Identity, task_id: str) -> HostTask:
        task = self._tasks.get(task_id)
        if task is None or task.owner != caller or task.expires <= time.time():
            raise MCPError(types.INVALID_PARAMS, UNKNOWN.format(task_id[:80]))
        return task

    def mine(self, caller: Identity) -> list[HostTask]:
        self.prune()
        return sorted((t for t in self._tasks.values() if t.owner == caller), key=lambda t: t.created)

    def cancel(self, caller: Identity, task_id: str) -> HostTask:
        task = self.get(caller, task_id)
        if task.terminal:
            raise MCPError(types.INVALID_PARAMS, f"task {task_id!r} already ended ({task.status}); nothing to cancel")
        task.set("cancelled", "cancelled by the caller")
        task.scope.cancel()
        return task


def task_fields(task: HostTask, era: str) -> dict[str, Any]:
    """The ``Task`` object of ``era`` ("2025": 2025-11-25; "2026": the tasks extension)."""
    ttl = round(task.ttl_s * 1000)
    out: dict[str, Any] = {"taskId": task.task_id, "status": task.status, "createdAt": _iso(task.created),
                           "lastUpdatedAt": _iso(task.updated)}
    if task.message is not None:
        out["statusMessage"] = task.message
    out.update({"ttl": ttl, "pollInterval": POLL_MS} if era == "2025" else {"ttlMs": ttl, "pollIntervalMs": POLL_MS})
    return out
