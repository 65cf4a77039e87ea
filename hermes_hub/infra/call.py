"""The per-call context: who is calling, and how to reach their host while the call runs.

    ctx = CallContext(Identity("ana"), progress=report, logs=route, host=channel)
    result = await catalog.call_tool("calendar_query", {"day": "monday"}, ctx)

The upstream builds one for every host request and hands it down through ``Catalog`` to the source
that serves it (a downstream connection or a built-in tool); the agent loop builds one for its
caller. Nothing has a default caller: a method that gets no context raises ``TypeError`` (a bug),
so access checks fail closed.

A transport that carries no caller of its own (stdio, an in-process ``Client(hub.server)``) names one
for everything served inside it; with none named, the hub refuses the request:

    with acting_as(hub.local):                  # `serve --stdio`, the CLI's in-process commands
        async with Client(hub.server) as host: ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK's types only name things here: importing them costs a CLI command 0.4 s
    import mcp.types as types

ADMIN = "admin"
USER = "user"

LEVELS: tuple[types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
Elicit = Callable[["types.ElicitRequestParams"], Awaitable["types.ElicitResult"]]
Sample = Callable[["types.CreateMessageRequestParams"], Awaitable[Any]]


@dataclass(frozen=True)
class Identity:
    user_id: str
    role: str = USER

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN


_NAMED: ContextVar[Identity | None] = ContextVar("hermes_caller", default=None)


@contextmanager
def acting_as(identity: Identity) -> Iterator[Identity]:
    """Name the caller of every request served inside the block by a transport without callers of its own.
    Tasks started inside it (a server's handlers, an in-memory client's server task) inherit the name."""
    token = _NAMED.set(identity)
    try:
        yield identity
    finally:
        _NAMED.reset(token)


def named_caller() -> Identity | None:
    """The caller named by the innermost ``acting_as`` around this task, if any."""
    return _NAMED.get()


@dataclass(frozen=True)
class LogRoute:
    """Where the log messages a forwarded call causes go: ``send``, from ``level`` up
    (``None``: whatever the server sends by default)."""

    level: types.LoggingLevel | None
    send: Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]

    def wants(self, level: types.LoggingLevel) -> bool:
        return self.level is None or LEVELS.index(level) >= LEVELS.index(self.level)


@dataclass(frozen=True)
class InputRounds:
    """A 2026-07-28 host's multi-round call: its answers so far. A 2026-07-28 server's
    ``InputRequiredResult`` goes up to the host as it is, and the host's retry comes back down."""

    input_responses: dict[str, Any] | None = None
    request_state: str | None = None


@dataclass(frozen=True)
class HostChannel:
    """How to ask the calling host something mid-call; ``None`` where it cannot be asked.
    ``key`` names the host connection, so requests of one host can be told from another's."""

    elicit: Elicit | None = None
    sample: Sample | None = None
    why_not: str = "the calling host does not support it"
    key: Hashable | None = None
    in_rounds: tuple[str, ...] = ()  # a 2026-07-28 host: what it answers as input-required rounds ("elicitation")


NO_HOST = HostChannel(why_not="the call did not come from a host that can be asked")
MODERN_HOST_WHY_NOT = "the calling host speaks 2026-07-28, which takes such requests only as input-required results"
ASKS_NOTHING_WHY_NOT = "the calling host (2026-07-28) declared neither elicitation nor sampling, so it cannot be asked"


def modern_host(key: Hashable, in_rounds: tuple[str, ...]) -> HostChannel:
    """A 2026-07-28 host's way back: the kinds of question it declared it answers, as input-required rounds."""
    return HostChannel(why_not=MODERN_HOST_WHY_NOT if in_rounds else ASKS_NOTHING_WHY_NOT, key=key,
                       in_rounds=in_rounds)


@dataclass(frozen=True)
class CallContext:
    """One call's caller and its ways back to the host. Frozen: derive with ``replace``."""

    caller: Identity
    progress: ProgressFn | None = None  # forwards the server's progress under the host's token
    logs: LogRoute | None = None  # None: the host did not ask for log messages
    host: HostChannel = NO_HOST
    rounds: InputRounds | None = None  # set for 2026-07-28 hosts (input-required rounds)
    deadline: float | None = None  # anyio clock time after which the caller no longer waits
    session_id: str | None = None  # the session the call belongs to (an agent run's), for the audit
    run_id: str | None = None  # the agent run that made the call, for the audit and the trace
    in_scope: Callable[[str], bool] | None = None  # the endpoint's tools (a toolset's); None: the whole catalog

    def replace(self, **changes: Any) -> CallContext:
        return dataclasses.replace(self, **changes)


def require(ctx: Any) -> CallContext:
    """``ctx`` itself, or ``TypeError``: every call through the catalog carries its caller."""
    if not isinstance(ctx, CallContext):
        raise TypeError(f"expected a CallContext, got {type(ctx).__name__}: every call needs its caller's context "
                        f"(a bug in the code that called the catalog)")
    return ctx


def require_identity(caller: Any) -> Identity:
    """``caller`` itself, or ``TypeError``: listings are filtered by who asks, never by default."""
    if not isinstance(caller, Identity):
        raise TypeError(f"expected the caller's Identity, got {type(caller).__name__} (a bug: lists are "
                        f"filtered by who asks)")
    return caller
