"""Holding a host's first ``tools/list`` briefly while the hub's servers are still starting.

The hub answers every request at once and announces servers that settle later with list_changed.
One-shot clients (the Inspector CLI, a script) list once and leave, and would miss a server that is
a moment from READY; so the first ``tools/list`` of each host connection waits for the servers to
settle, for at most ``hub.first_list_wait`` seconds, and only until they first have. Requests with
no connection to tell them apart (stateless 2026-07-28 HTTP) each count as a first.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

import anyio
from mcp.server.context import CallNext, HandlerResult

from hermes_hub.infra.sdk import host_connection


class Servers(Protocol):
    """The downstream servers as the hold sees them (the hub's pool)."""

    @property
    def settled(self) -> bool: ...  # every server READY or past its first attempt

    async def wait_settled(self) -> None: ...  # unbounded: the caller bounds it


class FirstList:
    """Server middleware that holds the first ``tools/list`` of a connection for up to ``wait`` seconds."""

    def __init__(self, wait: float, servers: Servers) -> None:
        self.wait, self.servers = wait, servers
        self.over = wait <= 0  # latched once the servers have settled: nothing is ever held again
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()

    async def __call__(self, ctx: Any, call_next: CallNext) -> HandlerResult:
        if not self.over and ctx.method == "tools/list" and self._first(ctx):
            await self.hold()
        return await call_next(ctx)

    async def hold(self) -> None:
        """Wait for the servers to settle, for at most ``wait`` seconds."""
        if self.over or self.servers.settled:
            self.over = True
            return
        with anyio.move_on_after(self.wait):
            await self.servers.wait_settled()
            self.over = True

    def _first(self, ctx: Any) -> bool:
        connection = host_connection(ctx.session)
        if connection is None:
            return True
        try:
            if connection in self._seen:
                return False
            self._seen.add(connection)
        except TypeError:  # not weakly referable: never seen before, as far as the hub can tell
            pass
        return True
