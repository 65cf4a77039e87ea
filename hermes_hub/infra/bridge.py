"""The bridge between a 2026-07-28 host and a handshake-era server that *pushes* elicitation or
sampling requests in the middle of a call.

A 2026-07-28 host cannot be sent requests; it answers ``InputRequiredResult`` rounds instead. So the
downstream call runs in a task that outlives the host's request: each request the server pushes
parks there and becomes one round for the host, and the host's retry (same tool, its answers, the
hub's ``request_state``) resumes the parked call. Progress and log messages go to whichever of the
host's requests is waiting at the time. A round nobody answers is dropped after ``ABANDON_AFTER``
seconds, cancelling the call downstream; a server restart ends a parked call with a clear error.
A parked call resumes only for the caller who started it (user and role): to anyone else its
``request_state`` answers as an unknown one does, so a leaked state can neither answer nor read it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import TaskGroup

from hermes_hub.infra.call import CallContext, HostChannel, Identity, InputRounds, LogRoute
from hermes_hub.infra.errors import DownstreamError

STATE_PREFIX = "hermes-hub/bridge/"
ABANDON_AFTER = 600.0

Result = types.CallToolResult | types.InputRequiredResult
Run = Callable[[CallContext], Awaitable[types.CallToolResult]]


@dataclass
class _Pending:
    current: CallContext  # the host request waiting now: where progress and logs go
    owner: Identity  # who started the call: the only caller its rounds resume for
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    wake: anyio.Event = field(default_factory=anyio.Event)  # a request was pushed, or the call ended
    questions: list[tuple[str, Any]] = field(default_factory=list)  # (key, request) not yet sent up
    answers: dict[str, Any] = field(default_factory=dict)  # key -> stream the parked push waits on
    result: types.CallToolResult | None = None
    error: BaseException | None = None

    async def ask(self, request: Any) -> Any:
        key = f"q{len(self.answers) + 1}"
        send, receive = anyio.create_memory_object_stream[Any](1)
        self.answers[key] = send
        self.questions.append((key, request))
        self.wake.set()
        with send, receive:  # closed however the wait ends; an answer arriving later is dropped
            return await receive.receive()

    def context(self, pid: str) -> CallContext:
        """The context the parked call runs with: questions park here, the rest follows ``current``."""

        async def sample(params: types.CreateMessageRequestParams) -> Any:
            return await self.ask(types.CreateMessageRequest(params=params))

        async def elicit(params: types.ElicitRequestParams) -> Any:
            return await self.ask(types.ElicitRequest(params=params))

        async def progress(value: float, total: float | None, message: str | None) -> None:
            if self.current.progress is not None:
                await self.current.progress(value, total, message)

        async def send_log(params: types.LoggingMessageNotificationParams) -> None:
            if self.current.logs is not None:
                await self.current.logs.send(params)

        first = self.current
        logs = LogRoute(first.logs.level, send_log) if first.logs else None
        return first.replace(host=HostChannel(elicit=elicit, sample=sample, key=pid), rounds=None,
                             progress=progress, logs=logs)


class Bridge:
    def __init__(self, server: str, why_lost: Callable[[], str] = lambda: "the connection ended") -> None:
        self.server = server
        self.why_lost = why_lost  # what happened to the connection, for calls parked when it ends
        self._pending: dict[str, _Pending] = {}
        self._tg: TaskGroup | None = None

    def attach(self, tg: TaskGroup | None) -> None:
        """Where parked calls run: the connection's task group while it is READY."""
        self._tg = tg

    @staticmethod
    def owns(rounds: InputRounds) -> bool:
        """True when ``rounds`` answers a question this bridge asked."""
        return (rounds.request_state or "").startswith(STATE_PREFIX)

    async def call(self, ctx: CallContext, run: Run) -> Result:
        state = (ctx.rounds.request_state if ctx.rounds else None) or ""
        if state.startswith(STATE_PREFIX):
            return await self._resume(state.removeprefix(STATE_PREFIX), ctx)
        return await self._start(ctx, run)

    async def _start(self, ctx: CallContext, run: Run) -> Result:
        if self._tg is None:
            raise DownstreamError(self.server, "not ready to bridge a call (no running connection)")
        pid, pend = secrets.token_urlsafe(12), _Pending(current=ctx, owner=ctx.caller)
        self._pending[pid] = pend
        parked = pend.context(pid)

        async def runner() -> None:
            try:
                with pend.scope:
                    pend.result = await run(parked)
            except Exception as e:  # handed to whoever waits for this call
                pend.error = e
            except anyio.get_cancelled_exc_class():  # the connection ended under the parked call
                pend.error = DownstreamError(self.server, f"connection lost during the request: {self.why_lost()}; "
                                             f"the call was cancelled, call the tool again", types.CONNECTION_CLOSED)
                raise
            finally:
                if pend.result is None and pend.error is None:  # expired: nobody answered the host's round
                    pend.error = DownstreamError(self.server, "nobody answered the call's question in time; the call "
                                                 "was cancelled, call the tool again")
                pend.done.set()
                pend.wake.set()

        self._tg.start_soon(runner)
        return await self._next(pid, pend)

    async def _resume(self, pid: str, ctx: CallContext) -> Result:
        pend = self._pending.get(pid)
        if pend is None or pend.owner != ctx.caller:  # another caller's call: as if the id were unknown
            raise DownstreamError(self.server, "this input-required round expired or was already answered; "
                                  "call the tool again")
        pend.current = ctx
        for key, answer in ((ctx.rounds.input_responses if ctx.rounds else None) or {}).items():
            if (send := pend.answers.pop(key, None)) is not None:
                try:
                    send.send_nowait(answer)  # room for one: each question gets one answer
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # the call ended meanwhile (its server restarted): ``_next`` says so
        return await self._next(pid, pend)

    async def _next(self, pid: str, pend: _Pending) -> Result:
        """Wait until the call finishes (its result) or pushes a request (one round for the host)."""
        await pend.wake.wait()
        if pend.questions and not pend.done.is_set():
            pend.wake = anyio.Event()
            asks, pend.questions = dict(pend.questions), []
            self._expire_later(pid, pend)
            return types.InputRequiredResult(input_requests=asks, request_state=STATE_PREFIX + pid)
        self._pending.pop(pid, None)
        if pend.result is None:
            raise pend.error or DownstreamError(self.server, "the call ended without a result")
        return pend.result

    def _expire_later(self, pid: str, pend: _Pending) -> None:
        if self._tg is None:
            return
        waiting_for = set(pend.answers)

        async def expire() -> None:
            await anyio.sleep(ABANDON_AFTER)
            if self._pending.get(pid) is pend and waiting_for <= set(pend.answers):  # nobody answered
                self._pending.pop(pid, None)
                pend.scope.cancel()

        self._tg.start_soon(expire)
