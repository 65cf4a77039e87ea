"""When a failed call may be sent again: transient failures only, and only when repeating is safe.

Transient: the server is (re)starting, the connection was lost, the call timed out. Safe: the
request never reached the server, or the tool says it is read-only or idempotent, or hub.json
lists it in ``retryable``. Everything else (bad arguments, tool errors, unknown tools) is final.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

import mcp.types as types

from hermes_hub.errors import DownstreamError, HubError, ServerNotReady

PASSING_STATES = frozenset({"STARTING", "RESTARTING", "DEGRADED"})  # states a server leaves by itself
TRANSIENT_CODES = frozenset({types.REQUEST_TIMEOUT, types.CONNECTION_CLOSED})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 1
    delays: tuple[float, ...] = (1.0, 3.0)
    retryable: tuple[str, ...] = ()  # tool globs the config declares safe to repeat

    def delay(self, attempt: int) -> float:
        return self.delays[min(attempt, len(self.delays) - 1)]

    def should_retry(self, error: HubError, tool: types.Tool, name: str, attempt: int) -> bool:
        """``attempt`` counts from 0; ``name`` is the server's own tool name."""
        if attempt >= self.retries:
            return False
        if isinstance(error, ServerNotReady):  # never reached the server
            return error.state in PASSING_STATES
        if isinstance(error, DownstreamError) and error.code in TRANSIENT_CODES:
            hints = tool.annotations
            safe = bool(hints and (hints.read_only_hint or hints.idempotent_hint))
            return safe or any(fnmatchcase(name, glob) for glob in self.retryable)
        return False
