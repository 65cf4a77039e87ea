"""When a failed call may be sent again: transient failures only, and only when repeating is safe.

Transient: the server is (re)starting, the connection was lost, the call timed out, or an HTTP
server answered "not now" (429, 502, 503, 504; its ``Retry-After`` is honoured up to
``MAX_RETRY_AFTER``). Safe: the request never reached the server, or the tool says it is read-only
or idempotent, or hub.json lists it in ``retryable``. Everything else (bad arguments, tool errors,
unknown tools) is final. ``explain`` says why a call was not (or no longer) retried.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

import mcp.types as types

from hermes_hub.infra.errors import DownstreamError, HubError, ServerNotReady

PASSING_STATES = frozenset({"STARTING", "RESTARTING", "DEGRADED"})  # states a server leaves by itself
TRANSIENT_CODES = frozenset({types.REQUEST_TIMEOUT, types.CONNECTION_CLOSED})
BUSY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRY_AFTER = 10.0  # seconds; a server asking for a longer wait is not retried within the call


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 1
    delays: tuple[float, ...] = (1.0, 3.0)
    retryable: tuple[str, ...] = ()  # tool globs the config declares safe to repeat

    def delay(self, attempt: int, error: HubError | None = None) -> float:
        """Seconds before the next attempt: what the server asked for, else the policy's own."""
        asked = getattr(error, "retry_after", None)
        return asked if asked is not None else self.delays[min(attempt, len(self.delays) - 1)]

    def should_retry(self, error: HubError, tool: types.Tool, name: str, attempt: int) -> bool:
        """``attempt`` counts from 0; ``name`` is the server's own tool name."""
        if attempt >= self.retries:
            return False
        if isinstance(error, ServerNotReady):  # never reached the server
            return error.state in PASSING_STATES
        if isinstance(error, DownstreamError) and _transient(error):
            if error.retry_after is not None and error.retry_after > MAX_RETRY_AFTER:
                return False
            return self.safe(tool, name)
        return False

    def safe(self, tool: types.Tool, name: str) -> bool:
        hints = tool.annotations
        return bool(hints and (hints.read_only_hint or hints.idempotent_hint)) or any(
            fnmatchcase(name, glob) for glob in self.retryable)

    def explain(self, error: HubError, tool: types.Tool, name: str, attempt: int) -> str:
        """The message for a call that is not tried again after ``attempt`` (from 0)."""
        if attempt > 0:
            return f"{error} (after {attempt + 1} attempts)"
        if not (isinstance(error, DownstreamError) and error.http_status in BUSY_STATUSES):
            return str(error)
        where = f"mcpServers.{error.server}"
        if error.retry_after is not None and error.retry_after > MAX_RETRY_AFTER:
            return f"{error}. Not retried: that is longer than the hub waits within a call ({MAX_RETRY_AFTER:g}s)"
        if not self.safe(tool, name):
            return (f"{error}. Not retried: tool '{name}' is not known to be safe to repeat (no readOnlyHint or "
                    f"idempotentHint, not in {where}.retryable); call it again yourself if repeating is safe")
        return f"{error}. Not retried: {where}.retries is {self.retries}"


def _transient(error: DownstreamError) -> bool:
    return error.code in TRANSIENT_CODES or error.http_status in BUSY_STATUSES
