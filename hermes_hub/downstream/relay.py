"""What a downstream server sends back during a call (elicitation and sampling requests, log
messages), matched to the call that caused it and so to that call's host.

Each forwarded call runs inside ``Relay.calling(ctx)``. When the server answers on the call's own
stream (streamable HTTP), the SDK runs our callback in the context of the task that sent the call,
so ``_CALL`` names it exactly; that context variable is the SDK's only way of telling us, and it is
read nowhere else. A handshake-era stdio server does not say which call a request belongs to: it
goes to the one call in flight, or to the one host every call in flight came from, and is refused
with the reason otherwise. Between a 2026-07-28 host and a 2026-07-28 server such requests travel
as input-required rounds inside the results and need no matching.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import mcp.types as types
from mcp import MCPError

from hermes_hub.infra.call import CallContext, HostChannel


class Pausable(Protocol):
    """A call's deadline, which must not run while a person answers the host (``Deadline``)."""

    def paused(self) -> AbstractContextManager[None]: ...


@dataclass(frozen=True, eq=False)  # compared by identity: two calls may carry equal contexts
class Call:
    ctx: CallContext
    deadline: Pausable | None = None


_CALL: ContextVar[Call | None] = ContextVar("hermes_hub_call", default=None)


def current_call() -> Call | None:
    """The call this task is forwarding, if any: where a server's task (``tasks.py``) asks its questions."""
    return _CALL.get()


class Relay:
    """One per downstream connection: its calls in flight, and the ``Client`` callbacks."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._in_flight: list[Call] = []

    @contextmanager
    def calling(self, ctx: CallContext, deadline: Pausable | None = None) -> Iterator[Call]:
        """Mark a call in flight; ``deadline`` pauses while its host answers a question."""
        call = Call(ctx, deadline)
        self._in_flight.append(call)
        token = _CALL.set(call)
        try:
            yield call
        finally:
            _CALL.reset(token)
            self._in_flight.remove(call)

    @staticmethod
    def untold(handler: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
        """``handler`` run as the SDK's dispatcher runs it for a line that names no call: outside the
        call of the task that runs it (the lane delivers a server's log lines in a call's own task)."""
        async def run(message: Any) -> None:
            token = _CALL.set(None)
            try:
                await handler(message)
            finally:
                _CALL.reset(token)

        return run

    def find(self, *, any_of_one_host: bool = True) -> Call | None:
        """The call a server's message belongs to, or None if that cannot be told.
        ``any_of_one_host``: when several calls of the same host are in flight, the first will do."""
        call = _CALL.get()
        if call is not None and call in self._in_flight:
            return call
        if len(self._in_flight) == 1:
            return self._in_flight[0]
        keys = {c.ctx.host.key for c in self._in_flight}
        if any_of_one_host and len(keys) == 1 and None not in keys:
            return self._in_flight[0]
        return None

    def _refuse(self, what: str, host: HostChannel | None) -> types.ErrorData:
        if host is not None:
            why = host.why_not
        elif not self._in_flight:
            why = "it came while no call to this server was in flight"
        else:
            why = (f"it came while calls from {len(self._in_flight)} different hosts were in flight, and this "
                   f"server's transport does not say which call a request belongs to (handshake-era stdio); "
                   f"serve it over streamable HTTP, or let its tools ask through input-required rounds, "
                   f"to have such requests relayed during concurrent calls")
        return types.ErrorData(code=types.INVALID_REQUEST,
                               message=f"hermes-hub cannot relay {what} from server '{self.server}': {why}")

    async def elicitation(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        call = self.find()
        host = call.ctx.host if call else None
        if call is None or host is None or host.elicit is None:
            return self._refuse("elicitation", host)
        return await _ask(host.elicit, params, call.deadline)

    async def sampling(self, ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        call = self.find()
        host = call.ctx.host if call else None
        if call is None or host is None or host.sample is None:
            return self._refuse("sampling", host)
        return await _ask(host.sample, params, call.deadline)

    def callbacks(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicitation, "sampling_callback": self.sampling}


async def _ask(ask: Callable[[Any], Awaitable[Any]], params: Any, deadline: Pausable | None) -> Any:
    try:
        with deadline.paused() if deadline else nullcontext():  # a person may take a while to answer
            return await ask(params)
    except MCPError as e:
        return types.ErrorData(code=e.code, message=e.message)
