"""Requests a downstream server sends back during a call (elicitation, sampling), relayed to the
host whose call caused them. Between a 2026-07-28 host and a 2026-07-28 server they travel as
``InputRequiredResult`` rounds, passed through unchanged (``InputRounds``).

The upstream sets ``CALLER`` for the duration of a forwarded request. A downstream's request is
matched to it through that context variable when the SDK runs the callback in the calling task
(2026-07-28 downstreams, HTTP), else by being the only call in flight to that server (handshake-era
stdio servers do not say which call a request belongs to). A request that cannot be matched, or
whose host cannot answer it, gets an error that says so instead of hanging.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import mcp.types as types
from mcp import MCPError

Elicit = Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]]
Sample = Callable[[types.CreateMessageRequestParams], Awaitable[Any]]


@dataclass(frozen=True)
class InputRounds:
    """A 2026-07-28 host's multi-round call: its answers so far. A 2026-07-28 server's
    ``InputRequiredResult`` goes up to the host as it is, and the host's retry comes back down."""

    input_responses: dict[str, Any] | None = None
    request_state: str | None = None


@dataclass(frozen=True)
class Caller:
    """How to ask the host of the current request; None where the host cannot be asked."""

    elicit: Elicit | None = None
    sample: Sample | None = None
    why_not: str = "the calling host does not support it"
    rounds: InputRounds | None = None  # set for 2026-07-28 hosts


CALLER: ContextVar[Caller | None] = ContextVar("hermes_hub_caller", default=None)
_CALL: ContextVar[tuple[Caller, Pausable | None] | None] = ContextVar("hermes_hub_call", default=None)


class Pausable(Protocol):
    """A call's deadline, which must not run while a person answers the host (``Deadline``)."""

    def paused(self) -> AbstractContextManager[None]: ...


class Relay:
    """One per downstream connection: its calls in flight and the ``Client`` callbacks."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._in_flight: list[tuple[Caller, Pausable | None]] = []

    @contextmanager
    def calling(self, deadline: Pausable | None = None) -> Iterator[None]:
        """Mark a call in flight for the current ``CALLER``; ``deadline`` pauses while the host answers."""
        caller = CALLER.get()
        if caller is None:
            yield
            return
        call = (caller, deadline)
        self._in_flight.append(call)
        token = _CALL.set(call)
        try:
            yield
        finally:
            _CALL.reset(token)
            self._in_flight.remove(call)

    def rounds(self) -> InputRounds | None:
        caller = CALLER.get()
        return caller.rounds if caller else None

    def _call(self) -> tuple[Caller | None, Pausable | None]:
        found = _CALL.get()
        if found is None and len(self._in_flight) == 1:
            found = self._in_flight[0]
        return found or (None, None)

    def _refuse(self, what: str, caller: Caller | None) -> types.ErrorData:
        why = caller.why_not if caller else (
            "it came while no call, or several calls, were in flight, so hermes-hub cannot tell whose it is")
        return types.ErrorData(code=types.INVALID_REQUEST,
                               message=f"hermes-hub cannot relay {what} from server '{self.server}': {why}")

    async def elicitation(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        caller, deadline = self._call()
        if caller is None or caller.elicit is None:
            return self._refuse("elicitation", caller)
        return await _ask(caller.elicit, params, deadline)

    async def sampling(self, ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        caller, deadline = self._call()
        if caller is None or caller.sample is None:
            return self._refuse("sampling", caller)
        return await _ask(caller.sample, params, deadline)

    def callbacks(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicitation, "sampling_callback": self.sampling}


async def _ask(ask: Callable[[Any], Awaitable[Any]], params: Any, deadline: Pausable | None) -> Any:
    try:
        with deadline.paused() if deadline else nullcontext():  # a person may take a while to answer
            return await ask(params)
    except MCPError as e:
        return types.ErrorData(code=e.code, message=e.message)
