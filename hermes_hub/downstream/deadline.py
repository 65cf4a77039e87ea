"""How long a forwarded call may take: an idle timeout that every progress notification from the
server resets, inside an absolute cap, and never past the caller's own deadline. Expiry cancels the call (the SDK tells the server with
``notifications/cancelled``) and says which limit ran out and which key raises it.

    deadline = Deadline(idle=60, cap=600)
    with deadline.scope():
        await client.call_tool(..., progress_callback=deadline.on_progress(forward))
    if deadline.expired: ...
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase

import anyio

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


def idle_timeout(default: float, overrides: dict[str, float], tool: str) -> float:
    """The idle timeout of ``tool``: the first matching ``tool_timeouts`` glob, else the server's."""
    return next((seconds for glob, seconds in overrides.items() if fnmatchcase(tool, glob)), default)


class Deadline:
    """One cancel scope whose deadline is the sooner of the idle timeout and the cap (or the caller's)."""

    def __init__(self, idle: float, cap: float, until: float | None = None) -> None:
        """``until``: the caller's deadline on the anyio clock (``CallContext.deadline``), if any."""
        self.idle, self.cap, self.until = idle, max(cap, idle), until
        self._scope = anyio.CancelScope()
        self._end = math.inf  # the cap, or the caller's deadline if that comes first
        self._idle_at = math.inf  # when the call is idle too long (inf: paused)

    def _arm(self) -> None:
        self._scope.deadline = min(self._end, self._idle_at)

    def on_progress(self, forward: ProgressFn | None) -> ProgressFn:
        async def progressed(value: float, total: float | None, message: str | None) -> None:
            self._idle_at = anyio.current_time() + self.idle
            self._arm()
            if forward is not None:
                await forward(value, total, message)

        return progressed

    @contextmanager
    def scope(self) -> Iterator[None]:
        now = anyio.current_time()
        self._end = min(now + self.cap if math.isfinite(self.cap) else math.inf,
                        math.inf if self.until is None else self.until)
        self._idle_at = now + self.idle
        self._arm()
        with self._scope:
            yield

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No idle timeout while the host is asked something (the cap still holds)."""
        self._idle_at = math.inf
        self._arm()
        try:
            yield
        finally:
            self._idle_at = anyio.current_time() + self.idle
            self._arm()

    @property
    def expired(self) -> str | None:
        """Which limit ended the call: "idle", "cap", "caller", or None if it finished in time."""
        if not self._scope.cancelled_caught:
            return None
        now = anyio.current_time()
        if self.until is not None and now >= self.until:
            return "caller"
        return "cap" if now >= self._end else "idle"
