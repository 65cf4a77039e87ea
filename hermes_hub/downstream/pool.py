"""The pool: every enabled server's connection, opened concurrently, none blocking another."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from types import TracebackType

import anyio

from hermes_hub.config import HubConfig
from hermes_hub.downstream.connection import Connection


class Pool:
    """``async with Pool(config) as pool`` starts every connection; leaving stops them all."""

    def __init__(self, config: HubConfig, on_change: Callable[[Connection], None] = lambda c: None) -> None:
        self._on_change = on_change
        self._changed = anyio.Event()
        self.connections = {
            name: Connection(name, cfg, config.base_dir, self._changed_hook)
            for name, cfg in config.mcp_servers.items()
            if not cfg.disabled
        }
        self._stack = AsyncExitStack()

    def _changed_hook(self, conn: Connection) -> None:
        self._changed.set()
        self._changed = anyio.Event()
        self._on_change(conn)

    async def __aenter__(self) -> Pool:
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)  # runs first on exit: stop every connection
        for conn in self.connections.values():
            tg.start_soon(conn.run, name=f"hermes-hub downstream {conn.name}")
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    @property
    def settled(self) -> bool:
        return all(c.settled for c in self.connections.values())

    async def wait_settled(self) -> None:
        """Return once every connection is READY or FAILED. Callers bound it with a timeout."""
        while not self.settled:
            await self._changed.wait()
