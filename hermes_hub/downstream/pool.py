"""The pool: every enabled server's connection, opened concurrently, none blocking another.

Each connection runs in its own cancel scope, so one server can be stopped, added or restarted
(``apply`` a new config) without disturbing the others.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from hermes_hub.infra.config import HubConfig, ServerConfig
from hermes_hub.downstream.accounts import Accounts
from hermes_hub.downstream.connection import Connection
from hermes_hub.downstream.framing import set_message_limit
from hermes_hub.downstream.grants import Grants
from hermes_hub.infra.errors import HubError
from hermes_hub.services.vault import Vault

STOP_TIMEOUT = 10.0  # a connection's teardown is itself bounded (stdin, SIGTERM, SIGKILL); this is a backstop


def _no_vault() -> Vault:
    raise HubError("this pool has no vault, so per_user servers cannot read their users' secrets; "
                   "run them in a started hub")


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    restarted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.restarted)


@dataclass
class _Running:
    conn: Connection | Accounts
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)


class Pool:
    """``async with Pool(config) as pool`` starts every connection; leaving stops them all."""

    def __init__(self, config: HubConfig, on_change: Callable[[Connection], None] = lambda c: None,
                 grants: Grants | None = None, vault: Callable[[], Vault] | None = None) -> None:
        self._on_change = on_change
        self.grants = grants  # OAuth grants of remote servers (None: no OAuth)
        self._vault = vault or _no_vault  # per_user servers read their users' secrets there
        self._changed = anyio.Event()
        self._base_dir: Path = config.base_dir
        set_message_limit(config.hub.message_bytes)  # read by each connection as it starts (``framing``)
        self.connections: dict[str, Connection | Accounts] = {name: self._new(name, config) for name in config.enabled()}
        self._running: dict[str, _Running] = {}
        self._tg: TaskGroup | None = None
        self._stack = AsyncExitStack()

    def _new(self, name: str, config: HubConfig) -> Connection | Accounts:
        return self._make(name, config.mcp_servers[name], config.base_dir)

    def _make(self, name: str, cfg: ServerConfig, base_dir: Path) -> Connection | Accounts:
        if cfg.per_user:  # one connection per hub user, each with their own secrets (``accounts``)
            return Accounts(name, cfg, base_dir, self._changed_hook, self._vault, grants=self.grants)
        return Connection(name, cfg, base_dir, self._changed_hook, grants=self.grants)

    def _changed_hook(self, conn: Connection) -> None:
        self._changed.set()
        self._changed = anyio.Event()
        self._on_change(conn)

    async def __aenter__(self) -> Pool:
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(self._tg.cancel_scope.cancel)  # runs first on exit: stop every connection
        for conn in self.connections.values():
            self._start(conn)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    def _start(self, conn: Connection | Accounts) -> None:
        assert self._tg is not None, "the pool is not running"
        running = self._running[conn.name] = _Running(conn)
        self.connections[conn.name] = conn

        async def run() -> None:
            try:
                with running.scope:
                    await conn.run()
            finally:
                running.done.set()

        self._tg.start_soon(run, name=f"hermes-hub downstream {conn.name}")

    async def stop(self, name: str) -> None:
        """Stop one server (its child process is gone when this returns) and forget it."""
        running = self._running.pop(name, None)
        conn = self.connections.pop(name, None)
        if running is None:
            return
        running.scope.cancel()
        with anyio.move_on_after(STOP_TIMEOUT):
            await running.done.wait()
        if conn is not None:
            self._changed_hook(conn)  # a removal is a change ``wait_for`` hears too

    async def restart(self, name: str) -> None:
        """Stop server ``name`` and start a fresh connection with the same entry (counted as a restart)."""
        old = self.connections[name]
        await self.stop(name)
        new = self._make(name, old.cfg, self._base_dir)
        new.restarts = old.restarts + 1
        self._start(new)

    async def stop_all(self) -> None:
        """Stop every server concurrently; each child's teardown is bounded."""
        async with anyio.create_task_group() as tg:
            for name in list(self._running):
                tg.start_soon(self.stop, name)

    async def apply(self, config: HubConfig) -> Changes:
        """Move to ``config``: start added servers, stop removed ones, restart changed entries only."""
        changes = Changes()
        set_message_limit(config.hub.message_bytes)  # connections started from now on
        wanted = config.enabled()
        for name in list(self.connections):
            if name not in wanted:
                await self.stop(name)
                changes.removed.append(name)
            elif wanted[name] != self.connections[name].cfg or config.base_dir != self._base_dir:
                await self.stop(name)
                changes.restarted.append(name)
        self._base_dir = config.base_dir
        for name in wanted:
            if name not in self.connections:
                if name not in changes.restarted:
                    changes.added.append(name)
                self._start(self._new(name, config))
        return changes

    @property
    def settled(self) -> bool:
        return all(c.settled for c in self.connections.values())

    async def wait_settled(self) -> None:
        """Return once every connection is READY or past its first attempt. Callers bound it."""
        await self.wait_for(lambda: self.settled)

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds, checked after every state change. Callers bound it.

            with anyio.fail_after(10):
                await pool.wait_for(lambda: pool.connections["notes"].ready)
        """
        while not predicate():
            await self._changed.wait()
