"""One supervised connection to one downstream MCP server, with an explicit state machine.

    STARTING --handshake + full listing--> READY --health checks fail--> DEGRADED (stopping it)
       │  ▲                                  │                              │
       │  └── backoff elapsed ── RESTARTING ◀┴── peer gone (exit, drop) ────┘
       │                         CRASH_LOOP  ◀── `crash_loop_after` quick failures in a row
       ├── error / timeout / exit ──▶ RESTARTING (or CRASH_LOOP)
       ├── config error that cannot heal (command or cwd missing) ──▶ FAILED (until a reload)
       └── 401: no OAuth grant, or it cannot be refreshed ──▶ NEEDS_AUTH ── a new grant in the vault ──▶ STARTING
    any state --hub stops--> STOPPED

A server is READY only once its handshake is done and every page of its tools, resources,
resource templates and prompts has been listed; until then none of its tools are in the catalog.
Every restart is a fresh process (or HTTP session) with a full handshake and listing again; lists
are cleared the moment a server leaves READY, so a stale catalog is never served.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Awaitable, Callable
from enum import Enum
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, MCPError
from mcp.client import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.bridge import Bridge
from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.backoff import Backoff
from hermes_hub.downstream.diagnosis import CANNOT_HEAL, explain, gone, tail, unwrap
from hermes_hub.downstream.era import EraClient, back_channel
from hermes_hub.downstream.forwarding import Forwarding
from hermes_hub.downstream.grants import Grants
from hermes_hub.downstream.health import HealthCheck
from hermes_hub.downstream.listing import LIST_METHODS, STALE, STALE_ON, Freshness, every_page, freshness, next_refresh
from hermes_hub.downstream.logs import LogRelay
from hermes_hub.downstream.oauth import wait_for_grant
from hermes_hub.downstream.relay import Relay
from hermes_hub.downstream.tasks import Tasks, task_capable
from hermes_hub.downstream.transports import Link, open_transport
from hermes_hub.downstream.watchers import Watchers
from hermes_hub.infra.errors import ServerNotReady

log = logging.getLogger("hermes_hub.downstream")
APP_HOST_SETTINGS = {"mimeTypes": [APP_MIME_TYPE]}  # the hub relays MCP Apps to hosts that render them
TEARDOWN_SECONDS = 5.0  # closing a lost session (an HTTP DELETE to a hung server...); stdio's stop is shielded

# The hub relays logging and resource subscriptions on purpose, deprecated at 2026-07-28 or not.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)


class State(str, Enum):
    STARTING = "STARTING"
    READY = "READY"
    DEGRADED = "DEGRADED"  # stopped answering health checks; being stopped, to restart
    RESTARTING = "RESTARTING"  # waiting out the backoff (``next_retry``)
    CRASH_LOOP = "CRASH_LOOP"  # fails fast every time; retried every ``backoff_max`` seconds
    FAILED = "FAILED"  # cannot heal without a config change
    NEEDS_AUTH = "NEEDS_AUTH"  # the server wants an OAuth sign-in (`hermes-hub login NAME`); waits for a grant
    STOPPED = "STOPPED"


_WAITING = (State.RESTARTING, State.CRASH_LOOP, State.FAILED, State.NEEDS_AUTH)  # an attempt has ended


class Connection(Forwarding):
    """Owns the ``Client`` of one server. ``run()`` is its single owner task."""

    def __init__(
        self, name: str, cfg: ServerConfig, base_dir: Path, on_change: Callable[[Connection], None] = lambda c: None,
        *, owner: str | None = None, resolve: Callable[[ServerConfig], Awaitable[ServerConfig]] | None = None,
        grants: Grants | None = None,
    ) -> None:
        self.name, self.cfg, self.base_dir = name, cfg, base_dir
        self.owner = owner  # the hub user this connection is for (``per_user``); None: the hub's own credentials
        self._resolve = resolve  # fills in the owner's ${secret:NAME}s at each attempt (``accounts``)
        self.grants = grants  # OAuth grants (None: no OAuth, e.g. a hub without a store)
        self._on_change = on_change
        self.state = State.STOPPED
        self.since = time.time()
        self.error: str | None = None
        self.link = Link()
        self.client: Client | None = None
        self.protocol_version: str | None = None
        self.server_info: types.Implementation | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.tools: list[types.Tool] = []
        self.resources: list[types.Resource] = []
        self.templates: list[types.ResourceTemplate] = []
        self.prompts: list[types.Prompt] = []
        self.freshness: dict[str, Freshness | None] = {}  # list method -> the server's cache hint (listing.py)
        self._relist = anyio.Event()
        self.relay = Relay(name)  # elicitation and sampling requests go back to the calling host
        self.logs = LogRelay(name, self.relay)  # ... and so do log messages during a call
        self.bridge = Bridge(name, self._gone)  # ... also to 2026-07-28 hosts when a handshake-era server pushes them
        self.watchers = Watchers(name, self._downstream_error)  # hosts subscribed to its resources
        self.health = HealthCheck(name, cfg)
        self._backoff = Backoff(cfg.backoff_initial, cfg.backoff_max, cfg.stable_after, cfg.crash_loop_after)
        self.restarts = 0
        self.last_exit_code: int | None = None  # of the last child that ended (stdio)
        self.retry_at: float | None = None  # time.monotonic() of the next attempt
        self._ready_at: float | None = None
        self._tried = False  # the first attempt has ended
        self.startup: dict[str, float] = {}  # the last READY attempt: spawn + handshake, then listing

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.state is State.READY

    def describe_state(self) -> str:
        wait = self.next_retry
        return self.state.value if wait is None else f"{self.state.value}, next try in {wait:.1f}s"

    @property
    def next_retry(self) -> float | None:
        """Seconds until the next attempt, while waiting out a backoff."""
        if self.retry_at is None or self.state not in (State.RESTARTING, State.CRASH_LOOP):
            return None
        return max(0.0, self.retry_at - time.monotonic())

    @property
    def settled(self) -> bool:
        """Past its first attempt: READY, or that attempt ended (it may be retrying)."""
        return self.state is State.READY or (self._tried and self.state is not State.STOPPED)

    async def run(self) -> None:
        """Supervise until cancelled: attempt, and after each failure wait the backoff and attempt
        again; a config error that cannot heal stays FAILED (a reload starts a fresh connection)."""
        try:
            while await self._attempt():
                if self.state is State.NEEDS_AUTH and self.grants is not None:  # no backoff: a person must act
                    await wait_for_grant(self.grants, self.owner, self.name, self.link.grant_seen)
                    continue
                await anyio.sleep(max(0.0, (self.retry_at or 0.0) - time.monotonic()))  # the backoff itself
                self.restarts += 1
        except anyio.get_cancelled_exc_class():
            self.client, self.retry_at = None, None
            self._set(State.STOPPED)
            raise

    async def _attempt(self) -> bool:
        """One process (or HTTP session) from spawn to loss. True: try again at ``retry_at``."""
        if held := self.cfg.held_back:  # an unset ${VAR}: starting it as written cannot work
            self._end(held, heals=False)
            return False
        self.link = Link(stderr_tail=self.link.stderr_tail)  # the tail spans restarts: a crash loop's lines stay
        self._relist = anyio.Event()
        self._set(State.STARTING, self.error)  # the previous attempt's error stays until READY
        why: str | None = None
        began = time.monotonic()
        # One scope for the whole life of the Client (it must be exited where it was entered);
        # its deadline bounds start-up, is lifted once READY, and bounds the teardown.
        scope = anyio.CancelScope(deadline=anyio.current_time() + self.cfg.startup_timeout)
        try:
            with scope:
                cfg = await self._resolve(self.cfg) if self._resolve else self.cfg
                async with EraClient(  # mode "auto": the handshake first (era.py)
                    open_transport(self.name, cfg, self.base_dir, self.link, owner=self.owner, grants=self.grants),
                    mode=self.cfg.mode,
                    back_channel=back_channel(self.cfg, self.link),
                    cache=None,
                    extensions=[advertise(EXTENSION_ID, APP_HOST_SETTINGS),  # MCP Apps pass through the hub
                                Tasks()],  # a server's tasks are followed to their end (tasks.py)
                    # handshake and listings: bounded like start-up; tool calls have their own Deadline
                    read_timeout_seconds=max(self.cfg.timeout, self.cfg.startup_timeout),
                    message_handler=self._on_message,
                    logging_callback=self.logs.on_log,
                    **self.relay.callbacks(),
                ) as client:
                    connected = time.monotonic()
                    self.protocol_version = client.protocol_version
                    self.server_info = client.server_info
                    self.capabilities = client.server_capabilities
                    await self._list_all(client)
                    await self.watchers.renew(client)
                    if self.link.lane is not None:  # log lines during its calls go where the SDK's would
                        self.link.lane.on_log = self.relay.untold(self.logs.on_log)
                    self.client = client
                    scope.deadline = math.inf
                    self._ready_at = time.monotonic()
                    self.startup = {"connect_s": round(connected - began, 3),
                                    "list_s": round(self._ready_at - connected, 3)}
                    self._set(State.READY)
                    why = await self._serve(client)
                    scope.deadline = anyio.current_time() + TEARDOWN_SECONDS  # even a hung peer's goodbye
                    if self.state is State.READY:  # the peer is gone: leave READY before the teardown
                        self._end(why)
            if scope.cancelled_caught and why is None:
                why = (f"did not become ready within {self.cfg.startup_timeout:g}s{tail(self.link)}; "
                       f"raise mcpServers.{self.name}.startup_timeout if it is just slow")
            self._end(why or self._gone())
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status line, never a crash
            cause = unwrap(exc)
            self._end(why or explain(self.name, self.cfg, self.link, cause),
                      heals=why is not None or not isinstance(cause, CANNOT_HEAL))
        return self.state is not State.FAILED

    def _end(self, why: str, heals: bool = True) -> None:
        """The attempt is over (once per attempt): FAILED if it cannot heal, else wait a backoff."""
        if self.state in _WAITING:
            return
        self._tried = True
        if self.cfg.transport == "stdio":
            self.last_exit_code = self.link.exit_code
        uptime = None if self._ready_at is None else time.monotonic() - self._ready_at
        self._ready_at = None
        if self.link.needs_auth:
            self.retry_at = None
            self._fail(self.link.needs_auth, State.NEEDS_AUTH)
            return
        if not heals:
            self._fail(why)
            return
        retry = self._backoff.failed(uptime)
        self.retry_at = time.monotonic() + retry.delay
        if retry.crash_loop:
            why = (f"crash loop: failed {retry.quick_failures} times in a row, each within "
                   f"{self.cfg.stable_after:g}s of starting; retrying every {retry.delay:g}s. Last failure: {why}")
        self._fail(why, State.CRASH_LOOP if retry.crash_loop else State.RESTARTING)

    async def _serve(self, client: Client) -> str:
        """Serve until the peer goes away or stops answering health checks (then DEGRADED); say why."""
        verdict: list[str] = []
        async with anyio.create_task_group() as tg:
            self.bridge.attach(tg)

            async def check_health() -> None:
                verdict.append(await self.health.watch(client))
                tg.cancel_scope.cancel()

            tg.start_soon(check_health)

            async def relist_on_notice() -> None:  # ... or when a list the server gave a ttl goes stale
                while True:
                    with anyio.move_on_after(next_refresh(self.freshness)):
                        await self._relist.wait()
                    self._relist = anyio.Event()
                    await self._list_all(client)
                    self._on_change(self)

            tg.start_soon(relist_on_notice)
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tg.start_soon(self._listen, client)
            await self.link.closed.wait()
            tg.cancel_scope.cancel()
        self.bridge.attach(None)
        if verdict and not self.link.closed.is_set():
            self.link.hung = True  # no polite shutdown for a child that does not answer
            self._fail(verdict[0], State.DEGRADED)
            return verdict[0]
        return self._gone()

    async def _listen(self, client: Client) -> None:
        """2026-07-28 servers announce changes only on a ``subscriptions/listen`` stream."""
        caps = client.server_capabilities or types.ServerCapabilities()
        wanted = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed and self.cfg.resources),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed and self.cfg.prompts),
        }
        if not any(wanted.values()):
            return
        try:
            async with client.listen(**wanted) as subscription:
                async for event in subscription:
                    self._stale(type(event).__name__)
        except (MCPError, RuntimeError) as e:  # includes SubscriptionLost; the link watch handles real drops
            log.info("[%s] change subscription ended: %s", self.name, e)

    async def _on_message(self, msg: Any) -> None:
        if isinstance(
            msg, types.ToolListChangedNotification | types.ResourceListChangedNotification | types.PromptListChangedNotification
        ):
            self._stale(type(msg).__name__)
        elif isinstance(msg, types.ResourceUpdatedNotification):
            await self.watchers.updated(msg.params.uri)

    def _stale(self, change: str) -> None:
        """A list changed: its hint is void at once (the hub's lists say ttl 0), and it is re-listed."""
        for method in STALE_ON.get(change, ()):
            self.freshness[method] = STALE
        self._relist.set()

    async def _list_all(self, client: Client) -> None:
        caps = client.server_capabilities or types.ServerCapabilities()
        modern, pages = client.protocol_version in MODERN_PROTOCOL_VERSIONS, {m: [] for m in LIST_METHODS}
        fetched = time.monotonic()
        self.tools = await every_page(client.list_tools, "tools", pages["tools/list"]) if caps.tools else []
        self.tools = task_capable(self.tools, caps)
        want_resources = caps.resources and self.cfg.resources
        self.resources = await every_page(client.list_resources, "resources",
                                          pages["resources/list"]) if want_resources else []
        self.templates = await every_page(client.list_resource_templates, "resource_templates",
                                          pages["resources/templates/list"]) if want_resources else []
        self.prompts = await every_page(client.list_prompts, "prompts",
                                        pages["prompts/list"]) if caps.prompts and self.cfg.prompts else []
        self.freshness = {m: freshness(p, modern, fetched) for m, p in pages.items()}

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error, self.since = state, error, time.time()
        if state is State.READY:
            log.info("[%s] READY: %d tools, %d resources, %d templates, %d prompts (%s) in %.2fs + %.2fs listing",
                     self.name, len(self.tools), len(self.resources), len(self.templates), len(self.prompts),
                     self.protocol_version, self.startup.get("connect_s", 0), self.startup.get("list_s", 0))
        self._on_change(self)

    def _fail(self, why: str, state: State = State.FAILED) -> None:
        """Leave READY (or STARTING): no client, no lists, so the catalog drops the server at once."""
        self.client = None
        self.tools, self.resources, self.templates, self.prompts = [], [], [], []
        self.freshness = {}
        self.logs.reset()  # subscriptions (``watchers``) are kept: renewed when READY again
        wait = ""
        if self.retry_at and state in _WAITING:
            left = self.retry_at - time.monotonic()
            wait = f" (next try in {left:.1f}s)" if left > 0.05 else " (restarting at once)"
        log.warning("[%s] %s%s: %s", self.name, state.value, wait, why)
        self._set(state, why)

    def _gone(self) -> str:
        return self.link.needs_auth or gone(self.cfg, self.link)

    # -- forwarding ------------------------------------------------------------------------

    def ready_client(self) -> Client:
        if self.state is not State.READY or self.client is None:
            raise ServerNotReady(self.name, self.state.value, self.error)
        return self.client
