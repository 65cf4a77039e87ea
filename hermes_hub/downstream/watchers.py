"""Hosts watching a server's resources: one downstream subscription per URI, however many hosts watch
it, renewed after the server restarts and dropped when the last watcher goes."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import mcp.types as types
from mcp import Client, MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.errors import DownstreamError

log = logging.getLogger("hermes_hub.downstream")
NotifyFn = Callable[[], Awaitable[None]]

# The hub relays resource subscriptions on purpose, deprecated at 2026-07-28 or not.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)


class Watchers:
    def __init__(self, server: str, to_error: Callable[[MCPError], DownstreamError]) -> None:
        self.server, self.to_error = server, to_error
        self._by_uri: dict[str, dict[Hashable, NotifyFn]] = {}  # subscribed uri -> who to tell

    async def add(self, client: Client, capabilities: Any, uri: str, watcher: Hashable, notify: NotifyFn) -> None:
        """Subscribe to ``uri`` (once, however many watchers); ``notify`` runs on each update."""
        if not self._by_uri.get(uri):
            caps = capabilities.resources if capabilities else None
            if not (caps and caps.subscribe) or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise DownstreamError(self.server, "does not support resource subscriptions (no resources.subscribe "
                                      "capability); read the resource again to see changes", types.INVALID_PARAMS)
            try:
                await client.session.subscribe_resource(uri)
            except MCPError as e:
                raise self.to_error(e) from e
        self._by_uri.setdefault(uri, {})[watcher] = notify

    async def renew(self, client: Client) -> None:
        """After a restart, subscribe again to what hosts are still watching."""
        for uri in list(self._by_uri):
            try:
                await client.session.subscribe_resource(uri)
            except MCPError as e:
                log.warning("[%s] could not renew the subscription to %s: %s", self.server, uri, e.message)

    async def remove(self, client: Callable[[], Client], uri: str, watcher: Hashable) -> None:
        """Forget ``watcher``; the server is unsubscribed when the last watcher of ``uri`` goes."""
        watchers = self._by_uri.get(uri, {})
        if watchers.pop(watcher, None) is None or watchers:
            return
        del self._by_uri[uri]
        try:
            await client().session.unsubscribe_resource(uri)
        except MCPError as e:
            raise self.to_error(e) from e

    async def updated(self, uri: str) -> None:
        for notify in list(self._by_uri.get(uri, {}).values()):
            await notify()
