"""Log messages a server sends during a forwarded call, relayed to the host that made the call.

The upstream sets ``CALLER_LOGS`` around a call (see ``Catalog.call_tool``). Messages that arrive on
the call's own HTTP stream still see it; on stdio they are matched to the one call in flight, and
messages outside any call go to the hub's debug log, tagged with the server.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import Client, MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger("hermes_hub.downstream")

LEVELS: tuple[types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True)
class LogRoute:
    """Where the log messages a forwarded call causes go: ``send``, from ``level`` up
    (``None``: whatever the server sends by default)."""

    level: types.LoggingLevel | None
    send: Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]

    def wants(self, level: types.LoggingLevel) -> bool:
        return self.level is None or LEVELS.index(level) >= LEVELS.index(self.level)


CALLER_LOGS: ContextVar[LogRoute | None] = ContextVar("hermes_hub_caller_logs", default=None)


class LogRelay:
    """One per downstream connection: the calls in flight that want logs, and the server's level."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.level: types.LoggingLevel | None = None  # the level asked of the server, lowest so far
        self._routes: list[LogRoute] = []

    def reset(self) -> None:
        """A new session starts at the server's default level."""
        self.level = None

    @contextmanager
    def routing(self) -> Iterator[LogRoute | None]:
        route = CALLER_LOGS.get()
        if route is not None:
            self._routes.append(route)
        try:
            yield route
        finally:
            if route is not None:
                self._routes.remove(route)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """The ``Client``'s logging callback: to the call that caused it, else the hub's log."""
        route = CALLER_LOGS.get() or (self._routes[0] if len(self._routes) == 1 else None)
        logger = f"{self.server}/{params.logger}" if params.logger else self.server
        if route is None:
            log.debug("[%s] %s: %s", logger, params.level, params.data)
        elif route.wants(params.level):
            await route.send(params.model_copy(update={"logger": logger}))

    async def ask(self, client: Client, route: LogRoute | None) -> dict[str, Any] | None:
        """Make the server send what ``route`` wants: 2026 servers per request (the ``_meta``
        returned here), older ones by lowering their level, never raising it (the hub filters)."""
        if route is None or route.level is None:
            return None
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return {types.LOG_LEVEL_META_KEY: route.level}
        lower = self.level is None or LEVELS.index(route.level) < LEVELS.index(self.level)
        caps = client.server_capabilities
        if lower and caps and caps.logging:
            try:
                await client.session.set_logging_level(route.level)
                self.level = route.level
            except MCPError as e:
                log.warning("[%s] logging/setLevel %s failed: %s", self.server, route.level, e.message)
        return None
