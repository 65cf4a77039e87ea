"""Log messages a server sends during a forwarded call, relayed to the host that made the call.

The call is found the way elicitation requests find theirs (``Relay.find``): messages on the
call's own HTTP stream name it, on stdio they go to the one call in flight; anything else goes to
the hub's debug log, tagged with the server.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
from mcp import Client, MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.call import LEVELS, LogRoute
from hermes_hub.downstream.relay import Relay
from hermes_hub.infra.masking import MASKER

log = logging.getLogger("hermes_hub.downstream")


class LogRelay:
    """One per downstream connection: where its log messages go, and the level asked of it."""

    def __init__(self, server: str, relay: Relay) -> None:
        self.server = server
        self.relay = relay
        self.level: types.LoggingLevel | None = None  # the level asked of the server, lowest so far

    def reset(self) -> None:
        """A new session starts at the server's default level."""
        self.level = None

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """The ``Client``'s logging callback: to the call that caused it, else the hub's log."""
        call = self.relay.find(any_of_one_host=False)
        route = call.ctx.logs if call else None
        logger = f"{self.server}/{params.logger}" if params.logger else self.server
        if route is None:
            log.debug("[%s] %s: %s", logger, params.level, MASKER(params.data, limit=2000))  # no secret in our log
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
