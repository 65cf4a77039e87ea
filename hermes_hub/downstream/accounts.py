"""A ``per_user`` server: one supervised ``Connection`` per hub user, each with that user's own credentials.

    accounts = Accounts("github", cfg, base_dir, on_change, vault=lambda: services.vault)
    await accounts.call_tool("search", {"q": "x"}, ctx)   # ctx.caller's own connection, started on first use

A user's connection (a child process for stdio, an HTTP session for remote servers) starts on their
first call, read or prompt, with every ``${secret:NAME}`` of the server's ``env`` and ``headers`` filled
from *their* secrets in the vault (read again at each start, so a secret set meanwhile is used by the
next one); it stops after ``idle_stop`` seconds without use, and ``max_children`` bounds how many run
at once. An OAuth server's connection presents its user's own grant (``hermes-hub login NAME --user
USER``, or Connect on the status page). A call is only ever served by its caller's own connection: a
user without the secrets, or without a grant, gets "connect your account" and how, never a connection
of someone else. Each connection is supervised
as any other (restarts, backoff, health checks).

What is listed: to each user, the tools, resources and prompts of *their own* READY connection
(``listing``); to everyone else, and to status and ``hub.pin: auto``, only the shared listing, learnt
at start from one connection started with every secret empty (``probe``), stopped once listed. A
user's listing may name their account (a tool ``send_to_acme_payroll``), so it is never shown to
another user, never pinned and never the shared one. A server that does not start without its
secrets has no shared listing; while it has none the hub looks every ``LEARN_SECONDS`` for a user who
has set every secret (and, for an OAuth server, holds a grant), and starts that user's connection, so
that they see their tools.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import TaskGroup

from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.config import ServerConfig
from hermes_hub.infra.config.sections import SECRET_KIND
from hermes_hub.downstream.connection import Connection, State
from hermes_hub.downstream.grants import SHARED, Grants
from hermes_hub.downstream.oauth import login_command, signs_in
from hermes_hub.infra.errors import DownstreamError, HubError, ServerNotReady
from hermes_hub.services.vault import Vault

log = logging.getLogger("hermes_hub.downstream")

LEARN_SECONDS = 5.0  # nothing listed yet: how often to look for a user whose connection could list it
STOP_TIMEOUT = 10.0  # a user's connection's teardown bounds itself; this is a backstop


class NeedsAccount(DownstreamError):
    """The caller has not connected their own account of a ``per_user`` server (a secret is not set)."""

    def __init__(self, server: str, missing: list[str]) -> None:
        self.missing = missing
        names = ", ".join(f"'{n}'" for n in missing)
        first = missing[0]
        super().__init__(server, f"connect your account: this server runs with each user's own credentials and "
                                 f"you have not set your secret {names}. Set it with `hermes-hub secret set {first}` "
                                 f"(or under Your secrets on the hub's status page); your next call uses it",
                         types.INVALID_REQUEST)


class NeedsSignIn(DownstreamError):
    """The caller has not signed in to their own account of a ``per_user`` OAuth server (no grant)."""

    def __init__(self, server: str, user: str) -> None:
        super().__init__(server, f"connect your account: this server runs with each user's own account and you "
                                 f"have not signed in to it. Run `{login_command(server, user)}` (or press Connect "
                                 f"{server} on the hub's status page); your next call uses it", types.INVALID_REQUEST)


class MissingSecret(HubError):
    """A secret was deleted between the check and a (re)start of the user's connection."""


@dataclass
class _Account:
    conn: Connection
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    last_used: float = field(default_factory=time.monotonic)
    in_flight: int = 0


class Accounts:
    """The users' connections of one ``per_user`` server; ``run()`` is their single owner task."""

    def __init__(self, name: str, cfg: ServerConfig, base_dir: Path, on_change: Callable[[Any], None],
                 vault: Callable[[], Vault], *, grants: Grants | None = None) -> None:
        self.name, self.cfg, self.base_dir = name, cfg, base_dir
        self._on_change = on_change
        self._vault = vault
        self._grants = grants  # each user's own OAuth grant (never the hub's shared one: owner is the user)
        self.users: dict[str, _Account] = {}
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []
        self.templates: list[types.ResourceTemplate] = []
        self.prompts: list[types.Prompt] = []
        self.protocol_version: str | None = None
        self.server_info: types.Implementation | None = None
        self.listed = False  # the shared listing is known (from the probe: no user's credentials)
        self.error: str | None = None  # why nothing is listed (for admins)
        self.restarts = 0  # restarts of the whole server (``Pool.restart``)
        self.since = time.time()
        self._state = State.STOPPED
        self._probing: Connection | None = None  # the credential-free connection, while it runs
        self._tg: TaskGroup | None = None
        self._wake = anyio.Event()
        self._changed = anyio.Event()

    # -- what the pool, the catalog and status read ------------------------------------------

    @property
    def state(self) -> State:
        return self._state

    @property
    def ready(self) -> bool:
        return self._state is State.READY

    @property
    def settled(self) -> bool:
        return self._state is State.READY

    def describe_state(self) -> str:
        return self._state.value

    @property
    def connected(self) -> int:
        """How many users' connections are READY now."""
        return sum(1 for a in self.users.values() if a.conn.ready)

    def accounts(self) -> list[dict[str, Any]]:
        """Each user's connection, for admins: user, state, pid, restarts, seconds since last use."""
        now = time.monotonic()
        return [{"user": user, "state": a.conn.describe_state(), "pid": a.conn.link.pid,
                 "restarts": a.conn.restarts, "idle_s": round(now - a.last_used, 1), "in_flight": a.in_flight}
                for user, a in sorted(self.users.items())]

    def listing(self, user: str) -> Connection | None:
        """``user``'s own READY connection, whose lists are what they see; None: they see the shared ones."""
        own = self.users.get(user)
        return own.conn if own is not None and own.conn.ready else None

    def listings(self) -> dict[str, Connection]:
        """Every user's own READY connection (what ``listing`` answers), by user."""
        return {user: a.conn for user, a in self.users.items() if a.conn.ready}

    async def account(self, user: str) -> str:
        """What ``user`` sees of their own account: connected, or how to connect it."""
        own = self.users.get(user)
        if own is not None and own.conn.ready:
            return "connected"
        try:
            await self._credentials(user)
        except NeedsAccount as e:
            return f"connect your account: `hermes-hub secret set {e.missing[0]}` (or under Your secrets on the status page)"
        except NeedsSignIn:
            return f"connect your account: `{login_command(self.name, user)}` (or press Connect {self.name} below)"
        except HubError:
            return "cannot read your secrets: ask the hub's admin"
        if own is not None and own.conn.state is State.NEEDS_AUTH:  # their grant stopped working (a failed refresh)
            return f"sign in again: `{login_command(self.name, user)}` (or press Connect {self.name} below)"
        return own.conn.describe_state().lower() if own is not None else "not started (starts on your first call)"

    @property
    def signs_in(self) -> bool:
        """Each user's connection presents that user's OAuth grant (a remote server without a static header)."""
        return self._grants is not None and signs_in(self.cfg)

    def poke(self) -> None:
        """A secret was set: look again (a server with nothing listed yet may now learn its list)."""
        self._wake.set()

    # -- lifecycle -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Probe for the listing, then stop users' idle connections until cancelled (which stops them all)."""
        self._set(State.STARTING)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                await self._probe()
                self._set(State.READY)
                await self._reap()
        finally:
            self._tg = None
            self.users.clear()
            self._set(State.STOPPED)

    async def _probe(self) -> None:
        """Start one connection with every secret empty, learn what it lists, stop it (bounded)."""
        if self.listed:
            return
        conn = Connection(self.name, self.cfg.with_secrets({}), self.base_dir, self._heard)
        self._probing = conn
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(conn.run)
                with anyio.move_on_after(self.cfg.startup_timeout + 1):
                    await self._until(lambda: conn.settled)
                tg.cancel_scope.cancel()
        finally:
            self._probing = None
        if not self.listed:
            self.error = (f"nothing listed for everyone: started without any user's credentials it did not become "
                          f"ready ({conn.error or conn.describe_state()}); each user sees its tools once their own "
                          f"connection runs")

    async def _reap(self) -> None:
        while True:
            self._wake = anyio.Event()
            now = time.monotonic()
            for user, acct in list(self.users.items()):
                if acct.in_flight == 0 and now - acct.last_used >= self.cfg.idle_stop:
                    log.info("[%s] stopping the connection of user %s: unused for %gs (idle_stop)",
                             self.name, user, self.cfg.idle_stop)
                    await self._stop(user)
            due = [a.last_used + self.cfg.idle_stop - now for a in self.users.values() if a.in_flight == 0]
            delay = max(0.05, min(due, default=math.inf))
            if not self.listed:
                await self._learn()
                delay = min(delay, LEARN_SECONDS)
            with anyio.move_on_after(delay):  # a period, or until a use or a new secret wakes it
                await self._wake.wait()

    async def _learn(self) -> None:
        """Nothing listed: start the connection of a user who has set every secret (and holds a grant, for an
        OAuth server), to learn the list."""
        needed = set(self.cfg.secret_names)
        if not (needed or self.signs_in) or any(not a.conn.settled or a.conn.ready for a in self.users.values()):
            return
        try:
            names = await self._vault().names(kind=SECRET_KIND) if needed else []
            holders = set(await self._grants.holders(self.name)) - {SHARED} if self._grants and self.signs_in else None
        except HubError:
            return
        have: dict[str, set[str]] = {user: set() for user in holders or ()}
        for n in names:
            have.setdefault(n.user_id, set()).add(n.name)
        for user, owned in sorted(have.items()):
            if holders is not None and user not in holders:
                continue
            if needed <= owned and user not in self.users and len(self.users) < self.cfg.max_children:
                log.info("[%s] starting the connection of user %s to learn the server's tools", self.name, user)
                self._start(user)
                return

    def _start(self, user: str) -> _Account:
        if self._tg is None:
            raise ServerNotReady(self.name, State.STOPPED.value)
        if len(self.users) >= self.cfg.max_children:
            raise DownstreamError(
                self.name, f"already runs {len(self.users)} users' connections, the most "
                f"mcpServers.{self.name}.max_children allows; try again once one has been unused for "
                f"{self.cfg.idle_stop:g}s (idle_stop), or ask the hub's admin to raise "
                f"mcpServers.{self.name}.max_children in {self.cfg.config_file}", types.INVALID_REQUEST)

        async def resolve(cfg: ServerConfig) -> ServerConfig:
            try:
                return cfg.with_secrets(await self._secrets(user))
            except NeedsAccount as e:
                raise MissingSecret(f"user {user!r} no longer has the secret '{e.missing[0]}'") from None

        acct = self.users[user] = _Account(Connection(self.name, self.cfg, self.base_dir, self._heard,
                                                      owner=user, resolve=resolve, grants=self._grants))

        async def run() -> None:
            try:
                with acct.scope:
                    await acct.conn.run()
            finally:
                acct.done.set()

        self._tg.start_soon(run, name=f"hermes-hub downstream {self.name} for {user}")
        return acct

    async def _stop(self, user: str) -> None:
        acct = self.users.pop(user, None)
        if acct is None:
            return
        acct.scope.cancel()
        with anyio.move_on_after(STOP_TIMEOUT):
            await acct.done.wait()
        self._heard(acct.conn)

    # -- forwarding: always the caller's own connection -----------------------------------------

    async def _secrets(self, user: str) -> dict[str, str]:
        vault = self._vault()
        values, missing = {}, []
        for name in self.cfg.secret_names:
            value = await vault.get(user, SECRET_KIND, name)
            if value is None:
                missing.append(name)
            else:
                values[name] = value
        if missing:
            raise NeedsAccount(self.name, missing)
        return values

    async def _credentials(self, user: str) -> None:
        """Raise "connect your account" (``NeedsAccount``, ``NeedsSignIn``) unless ``user`` has set every secret
        and, for an OAuth server, holds a grant of their own (the hub's shared one never stands in)."""
        await self._secrets(user)
        if self._grants is not None and self.signs_in:
            grant = (await self._grants.load(user, self.name)).grant
            if grant is None or grant.tokens is None:
                raise NeedsSignIn(self.name, user)

    @asynccontextmanager
    async def _own(self, caller: Identity) -> AsyncIterator[Connection]:
        """The caller's READY connection (started if need be), counted as in use while the block runs."""
        user = caller.user_id
        acct = self.users.get(user)
        if acct is not None and acct.conn.state is State.FAILED:  # cannot heal as it is: check the secrets again
            await self._stop(user)
            acct = None
        if acct is None:
            await self._credentials(user)  # "connect your account", before anything starts
            acct = self.users.get(user) or self._start(user)  # another call of theirs may have started it meanwhile
        acct.in_flight += 1
        try:
            if not acct.conn.settled:
                with anyio.move_on_after(self.cfg.startup_timeout + 1):
                    await self._until(lambda: acct.conn.settled)
            if not acct.conn.ready:
                raise ServerNotReady(self.name, acct.conn.describe_state(), acct.conn.error).for_caller(caller.is_admin)
            yield acct.conn
        finally:
            acct.in_flight -= 1
            acct.last_used = time.monotonic()
            self._wake.set()

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
                        ) -> types.CallToolResult | types.InputRequiredResult:
        async with self._own(ctx.caller) as conn:
            return await conn.call_tool(name, arguments, ctx)

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        async with self._own(ctx.caller) as conn:
            return await conn.read_resource(uri, ctx)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None, ctx: CallContext,
                         ) -> types.GetPromptResult:
        async with self._own(ctx.caller) as conn:
            return await conn.get_prompt(name, arguments, ctx)

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult:
        async with self._own(ctx.caller) as conn:
            return await conn.complete(ref, argument, context, ctx)

    # -- changes ---------------------------------------------------------------------------------

    def _heard(self, conn: Connection) -> None:
        """A connection changed state: the probe's lists are the shared ones once it is READY (a user's stay
        theirs, ``listing``); tell the pool either way (the catalog rebuilds)."""
        if conn.ready and conn is self._probing:
            self.tools, self.resources, self.templates, self.prompts = (
                list(conn.tools), list(conn.resources), list(conn.templates), list(conn.prompts))
            self.protocol_version, self.server_info = conn.protocol_version, conn.server_info
            self.listed, self.error = True, None
        self._changed.set()
        self._changed = anyio.Event()
        self._on_change(self)

    def _set(self, state: State) -> None:
        self._state, self.since = state, time.time()
        self._changed.set()
        self._changed = anyio.Event()
        self._on_change(self)

    async def _until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds, checked after every change. Callers bound it."""
        while not predicate():
            await self._changed.wait()
