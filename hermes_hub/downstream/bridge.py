"""The bridge between a 2026-07-28 host and a handshake-era server that *pushes* elicitation or
sampling requests in the middle of a call.

A 2026-07-28 host cannot be sent requests; it answers ``InputRequiredResult`` rounds instead. So the
downstream call runs in a task that outlives the host's request: each request the server pushes
parks there and becomes one round for the host, and the host's retry (same tool, its answers, the
hub's ``request_state``) resumes the parked call. A round nobody answers is dropped after
``ABANDON_AFTER`` seconds, cancelling the call downstream.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import TaskGroup

from hermes_hub.downstream.relay import CALLER, Caller, InputRounds
from hermes_hub.errors import DownstreamError

STATE_PREFIX = "hermes-hub/bridge/"
ABANDON_AFTER = 600.0

Result = types.CallToolResult | types.InputRequiredResult


@dataclass
class _Pending:
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
        async with receive:
            return await receive.receive()


class Bridge:
    def __init__(self, server: str, why_lost: Callable[[], str] = lambda: "the connection ended") -> None:
        self.server = server
        self.why_lost = why_lost  # what happened to the connection, for calls parked when it ends
        self._pending: dict[str, _Pending] = {}
        self._tg: TaskGroup | None = None

    def attach(self, tg: TaskGroup | None) -> None:
        """Where parked calls run: the connection's task group while it is READY."""
        self._tg = tg

    async def call(self, rounds: InputRounds, run: Callable[[], Awaitable[types.CallToolResult]]) -> Result:
        state = rounds.request_state or ""
        if state.startswith(STATE_PREFIX):
            return await self._resume(state.removeprefix(STATE_PREFIX), rounds.input_responses or {})
        return await self._start(run)

    async def _start(self, run: Callable[[], Awaitable[types.CallToolResult]]) -> Result:
        if self._tg is None:
            raise DownstreamError(self.server, "not ready to bridge a call (no running connection)")
        pid, pend = secrets.token_urlsafe(12), _Pending()
        self._pending[pid] = pend

        async def sample(params: types.CreateMessageRequestParams) -> Any:
            return await pend.ask(types.CreateMessageRequest(params=params))

        async def elicit(params: types.ElicitRequestParams) -> Any:
            return await pend.ask(types.ElicitRequest(params=params))

        async def runner() -> None:
            token = CALLER.set(Caller(elicit=elicit, sample=sample))
            try:
                with pend.scope:
                    pend.result = await run()
            except Exception as e:  # handed to whoever waits for this call
                pend.error = e
            except anyio.get_cancelled_exc_class():  # the connection ended under the parked call
                pend.error = DownstreamError(self.server, f"connection lost during the request: {self.why_lost()}",
                                             types.CONNECTION_CLOSED)
                raise
            finally:
                CALLER.reset(token)
                pend.done.set()
                pend.wake.set()

        self._tg.start_soon(runner)
        return await self._next(pid, pend)

    async def _resume(self, pid: str, responses: dict[str, Any]) -> Result:
        pend = self._pending.get(pid)
        if pend is None:
            raise DownstreamError(self.server, "this input-required round expired or was already answered; "
                                  "call the tool again")
        for key, answer in responses.items():
            if (send := pend.answers.pop(key, None)) is not None:
                await send.send(answer)
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
        if pend.error is not None:
            raise pend.error
        assert pend.result is not None
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
