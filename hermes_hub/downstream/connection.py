"""One supervised connection to one downstream MCP server, with an explicit state machine.

    STARTING --handshake + full listing--> READY --peer gone--> FAILED
        └──────────── error / timeout ──────────────────────────┘
    any state --hub stops--> STOPPED

A server is READY only once its handshake is done and every page of its tools, resources,
resource templates and prompts has been listed; until then none of its tools are in the catalog.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Awaitable, Callable, Hashable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.config import ServerConfig
from hermes_hub.downstream.transports import CommandNotFound, Link, open_transport
from hermes_hub.errors import DownstreamError, ServerNotReady

log = logging.getLogger("hermes_hub.downstream")

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
NotifyFn = Callable[[], Awaitable[None]]
LEVELS: tuple[types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The hub relays logging and resource subscriptions on purpose, deprecated at 2026-07-28 or not.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)


@dataclass(frozen=True)
class LogRoute:
    """Where the log messages a forwarded call causes go: ``send``, from ``level`` up
    (``None``: whatever the server sends by default)."""

    level: types.LoggingLevel | None
    send: Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]

    def wants(self, level: types.LoggingLevel) -> bool:
        return self.level is None or LEVELS.index(level) >= LEVELS.index(self.level)


# Set by the caller around a forwarded call (see ``Catalog.call_tool``). Messages that arrive on
# the call's own HTTP stream still see it; on stdio they are matched to the one call in flight.
CALLER_LOGS: ContextVar[LogRoute | None] = ContextVar("hermes_hub_caller_logs", default=None)


class State(str, Enum):
    STARTING = "STARTING"
    READY = "READY"
    FAILED = "FAILED"
    STOPPED = "STOPPED"


class Connection:
    """Owns the ``Client`` of one server. ``run()`` is its single owner task."""

    def __init__(
        self, name: str, cfg: ServerConfig, base_dir: Path, on_change: Callable[[Connection], None] = lambda c: None
    ) -> None:
        self.name, self.cfg, self.base_dir = name, cfg, base_dir
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
        self._relist = anyio.Event()
        self._log_level: types.LoggingLevel | None = None  # the level asked of the server, lowest so far
        self._log_routes: list[LogRoute] = []  # calls in flight that want their log messages
        self._watchers: dict[str, dict[Hashable, NotifyFn]] = {}  # subscribed uri -> who to tell

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.state is State.READY

    def describe_state(self) -> str:
        return self.state.value

    @property
    def settled(self) -> bool:
        """Past start-up: READY, or given up with a reason."""
        return self.state in (State.READY, State.FAILED)

    async def run(self) -> None:
        """Connect, list, serve until the peer goes away or the task is cancelled."""
        self.link = Link()
        self._set(State.STARTING)
        # One scope for the whole life of the Client (it must be exited where it was entered);
        # its deadline bounds start-up only and is lifted once READY.
        scope = anyio.CancelScope(deadline=anyio.current_time() + self.cfg.startup_timeout)
        try:
            with scope:
                async with Client(
                    open_transport(self.name, self.cfg, self.base_dir, self.link),
                    mode=self.cfg.mode,
                    cache=None,
                    read_timeout_seconds=self.cfg.timeout,
                    message_handler=self._on_message,
                    logging_callback=self._on_log,
                ) as client:
                    self.protocol_version = client.protocol_version
                    self.server_info = client.server_info
                    self.capabilities = client.server_capabilities
                    await self._list_all(client)
                    self.client = client
                    scope.deadline = math.inf
                    self._set(State.READY)
                    await self._serve(client)
                    self.client = None
            if scope.cancelled_caught:
                self._fail(f"did not become ready within {self.cfg.startup_timeout:g}s{self._tail()}; "
                           f"raise mcpServers.{self.name}.startup_timeout if it is just slow")
            else:
                self._fail(self._gone())
        except anyio.get_cancelled_exc_class():
            self.client = None
            self._set(State.STOPPED)
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status line, never a crash
            self.client = None
            self._fail(self._explain(exc))

    async def _serve(self, client: Client) -> None:
        async with anyio.create_task_group() as tg:

            async def relist_on_notice() -> None:
                while True:
                    await self._relist.wait()
                    self._relist = anyio.Event()
                    await self._list_all(client)
                    self._on_change(self)

            tg.start_soon(relist_on_notice)
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tg.start_soon(self._listen, client)
            await self.link.closed.wait()
            tg.cancel_scope.cancel()

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
                async for _ in subscription:
                    self._relist.set()
        except (MCPError, RuntimeError) as e:  # includes SubscriptionLost; the link watch handles real drops
            log.info("[%s] change subscription ended: %s", self.name, e)

    async def _on_message(self, msg: Any) -> None:
        if isinstance(
            msg, types.ToolListChangedNotification | types.ResourceListChangedNotification | types.PromptListChangedNotification
        ):
            self._relist.set()
        elif isinstance(msg, types.ResourceUpdatedNotification):
            for notify in list(self._watchers.get(msg.params.uri, {}).values()):
                await notify()

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Relay a log message to the call that caused it; with no such call, to the hub's log."""
        route = CALLER_LOGS.get() or (self._log_routes[0] if len(self._log_routes) == 1 else None)
        logger = f"{self.name}/{params.logger}" if params.logger else self.name
        if route is None:
            log.debug("[%s] %s: %s", logger, params.level, params.data)
        elif route.wants(params.level):
            await route.send(params.model_copy(update={"logger": logger}))

    async def _list_all(self, client: Client) -> None:
        caps = client.server_capabilities or types.ServerCapabilities()
        self.tools = await _pages(client.list_tools, "tools") if caps.tools else []
        want_resources = caps.resources and self.cfg.resources
        self.resources = await _pages(client.list_resources, "resources") if want_resources else []
        self.templates = await _pages(client.list_resource_templates, "resource_templates") if want_resources else []
        self.prompts = await _pages(client.list_prompts, "prompts") if caps.prompts and self.cfg.prompts else []

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error, self.since = state, error, time.time()
        if state is State.READY:
            log.info("[%s] READY: %d tools, %d resources, %d templates, %d prompts (%s)", self.name,
                     len(self.tools), len(self.resources), len(self.templates), len(self.prompts), self.protocol_version)
        self._on_change(self)

    def _fail(self, why: str) -> None:
        self.tools, self.resources, self.templates, self.prompts = [], [], [], []
        self._watchers, self._log_level = {}, None
        log.warning("[%s] FAILED: %s", self.name, why)
        self._set(State.FAILED, why)

    # -- explanations a person can act on --------------------------------------------------

    def _tail(self) -> str:
        return f"; last stderr line: {self.link.stderr_tail[-1]}" if self.link.stderr_tail else ""

    def _gone(self) -> str:
        if self.cfg.transport == "stdio":
            code = self.link.exit_code
            how = f"exit {code}" if code is None or code >= 0 else f"killed by signal {-code}"
            return f"process exited ({how}){self._tail()}"
        return f"connection to {self.cfg.url} closed"

    def _explain(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        where = f"mcpServers.{self.name}"
        if isinstance(exc, CommandNotFound):
            return f"{exc}; check {where}.command in hub.json"
        if isinstance(exc, PermissionError | FileNotFoundError):
            return f"cannot start {self.cfg.command!r}: {exc.strerror}; check {where}.command in hub.json"
        if self.link.exited_on_its_own:
            return f"exited during startup ({self._gone()}); check {where}.command and .args in hub.json"
        if isinstance(exc, MCPError):
            return f"handshake failed: {exc.message} (code {exc.code}); is {where} an MCP server? try mode \"legacy\""
        if self.cfg.transport != "stdio":
            return f"cannot reach {self.cfg.url}: {type(exc).__name__}: {exc}; check {where}.url and that it is up"
        return f"{type(exc).__name__}: {exc}{self._tail()}"

    # -- forwarding ------------------------------------------------------------------------

    def ready_client(self) -> Client:
        if self.state is not State.READY or self.client is None:
            raise ServerNotReady(self.name, self.state.value, self.error)
        return self.client

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, progress: ProgressFn | None = None
    ) -> types.CallToolResult:
        client = self.ready_client()
        route = CALLER_LOGS.get()
        meta = await self._ask_for_logs(client, route)
        if route is not None:
            self._log_routes.append(route)
        try:
            return await client.call_tool(name, arguments, progress_callback=progress, meta=meta)
        except MCPError as e:
            raise self._downstream_error(e) from e
        finally:
            if route is not None:
                self._log_routes.remove(route)

    async def _ask_for_logs(self, client: Client, route: LogRoute | None) -> dict[str, Any] | None:
        """Make the server send what ``route`` wants: 2026 servers per request (the ``_meta``
        returned here), older ones by lowering their level, never raising it (the hub filters)."""
        if route is None or route.level is None:
            return None
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return {types.LOG_LEVEL_META_KEY: route.level}
        lower = self._log_level is None or LEVELS.index(route.level) < LEVELS.index(self._log_level)
        if lower and self.capabilities and self.capabilities.logging:
            try:
                await client.session.set_logging_level(route.level)
                self._log_level = route.level
            except MCPError as e:
                log.warning("[%s] logging/setLevel %s failed: %s", self.name, route.level, e.message)
        return None

    async def subscribe_resource(self, uri: str, watcher: Hashable, notify: NotifyFn) -> None:
        """Subscribe to ``uri`` (once, however many watchers); ``notify`` runs on each update."""
        client = self.ready_client()
        if not self._watchers.get(uri):
            caps = self.capabilities.resources if self.capabilities else None
            if not (caps and caps.subscribe) or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise DownstreamError(self.name, "does not support resource subscriptions (no resources.subscribe "
                                      "capability); read the resource again to see changes", types.INVALID_PARAMS)
            try:
                await client.session.subscribe_resource(uri)
            except MCPError as e:
                raise self._downstream_error(e) from e
        self._watchers.setdefault(uri, {})[watcher] = notify

    async def unsubscribe_resource(self, uri: str, watcher: Hashable) -> None:
        """Forget ``watcher``; the server is unsubscribed when the last watcher of ``uri`` goes."""
        watchers = self._watchers.get(uri, {})
        if watchers.pop(watcher, None) is None or watchers:
            return
        del self._watchers[uri]
        try:
            await self.ready_client().session.unsubscribe_resource(uri)
        except MCPError as e:
            raise self._downstream_error(e) from e

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        try:
            return await self.ready_client().read_resource(uri)
        except MCPError as e:
            raise self._downstream_error(e) from e

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        try:
            return await self.ready_client().get_prompt(name, arguments)
        except MCPError as e:
            raise self._downstream_error(e) from e

    async def complete(
        self, ref: types.PromptReference | types.ResourceTemplateReference, argument: dict[str, str],
        context: dict[str, str] | None,
    ) -> types.CompleteResult:
        try:
            return await self.ready_client().complete(ref, argument, context_arguments=context)
        except MCPError as e:
            raise self._downstream_error(e) from e

    def _downstream_error(self, e: MCPError) -> DownstreamError:
        if e.code == types.REQUEST_TIMEOUT:
            return DownstreamError(self.name, f"timed out after {self.cfg.timeout:g}s "
                                   f"(mcpServers.{self.name}.timeout)", e.code)
        if e.code == types.CONNECTION_CLOSED or self.link.closed.is_set():
            return DownstreamError(self.name, f"connection lost during the request: {self._gone()}", e.code)
        return DownstreamError(self.name, e.message, e.code)


async def _pages(fetch: Callable[..., Awaitable[Any]], attr: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):  # a server that loops its cursors must not hang start-up
        try:
            page = await fetch(cursor=cursor)
        except MCPError as e:
            if e.code == types.METHOD_NOT_FOUND:  # e.g. resources without templates: nothing to list
                return items
            raise
        items += getattr(page, attr)
        cursor = page.next_cursor
        if not cursor:
            return items
    raise DownstreamError("?", f"{attr} listing did not end after 1000 pages")
