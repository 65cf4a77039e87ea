"""The transport-free MCP server hosts talk to: the catalog behind low-level ``Server`` handlers.

Both protocol eras are served by the same object; stdio and HTTP only mount it (see ``app.py``,
``stdio.py``). Every list is read from the catalog per request, so a server becoming ready shows
up at once, and hosts are told with list_changed on both eras' channels (``Announcer``).
Log messages a server sends during a call go to the calling host, at the level it asked for;
resource updates go to the hosts that subscribed (handshake-era hosts: resources/subscribe).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import mcp.types as types
from mcp import MCPError
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import ServerMessageMetadata
from mcp.types import methods as spec
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.core.aggregation import apps
from hermes_hub.infra.call import CallContext, HostChannel, Identity, InputRounds, LogRoute, modern_host
from hermes_hub.infra.errors import DownstreamError, HubError, InvalidInput, NotFound, ServerNotReady, UnknownName
from hermes_hub.infra.sdk import host_connection, without_request_spans
from hermes_hub.infra.telemetry.tracing import enabled as spans_exported
from hermes_hub.protocol.upstream.first_list import FirstList
from hermes_hub.protocol.upstream.hints import CacheHints, defers as _defers
from hermes_hub.protocol.upstream.listening import Listening
from hermes_hub.protocol.upstream.surface import Surface
from hermes_hub.protocol.upstream.task_protocol import (LEGACY_CAPABILITY, LEGACY_VERSION, TaskProtocol, TaskSession,
                                                        with_task_support)
from hermes_hub.protocol.upstream.tasks import TaskBoard

log = logging.getLogger("hermes_hub.protocol.upstream")
Ctx = ServerRequestContext[Any]
LOG_LEVEL = "hermes-hub/log-level"  # key in a host connection's state: its logging/setLevel

# The hub serves logging and resource subscriptions on purpose, deprecated at 2026-07-28 or not.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)


class Announcer:
    """Tells every connected host that a list changed: 2026 hosts via the subscription bus,
    handshake-era hosts on the session they opened (captured at ``notifications/initialized``)."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listening: Listening | None = None  # 2026-07-28 listen streams, per person (``listen``)
        self.legacy_sessions: set[Any] = set()

    async def on_initialized(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        session = ctx.session
        self.legacy_sessions.add(session)
        conn = host_connection(session)  # drop the session when its connection ends
        if conn is not None:
            conn.exit_stack.callback(self.legacy_sessions.discard, session)

    def listen(self, identify: Callable[[Any], Any]) -> Listening:
        self.listening = Listening(self.bus, identify)
        return self.listening

    async def changed(self, kinds: set[str]) -> None:
        events = {"tools": ToolsListChanged, "resources": ResourcesListChanged, "prompts": PromptsListChanged}
        for kind in sorted(kinds):
            await self.bus.publish(events[kind]())
        for session in list(self.legacy_sessions):
            for kind in kinds:  # sends to a closed peer are dropped, never raised
                send = {"tools": session.send_tool_list_changed, "resources": session.send_resource_list_changed,
                        "prompts": session.send_prompt_list_changed}[kind]
                await send()


class HubServer(Server[Any]):
    """Advertise listChanged to handshake-era hosts on every transport (the SDK passes no options),
    and the 2025-11-25 ``tasks`` capability when the hub holds tasks."""

    holds_tasks = False

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        opts = notification_options or NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True
        )
        init = super().create_initialization_options(opts, *args, **kwargs)
        if self.holds_tasks:
            init.capabilities.tasks = LEGACY_CAPABILITY
        return init


def _host_connection(ctx: Ctx) -> Any:
    """The host's connection: one per stdio process or HTTP session (see ``sdk.host_connection``).
    Falls back to this request's session proxy."""
    return host_connection(ctx.session) or ctx.session


def _log_route(ctx: Ctx) -> LogRoute | None:
    """Where a call's downstream log messages go: on this request's stream, at the level this host
    asked for (2026 hosts per request in ``_meta``, older ones with logging/setLevel)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        level = (ctx.meta or {}).get(types.LOG_LEVEL_META_KEY)
        if level is None:
            return None  # a 2026 host that did not opt in gets no log messages
    else:
        level = getattr(_host_connection(ctx), "state", {}).get(LOG_LEVEL)

    async def send(params: types.LoggingMessageNotificationParams) -> None:
        await ctx.session.send_log_message(params.level, params.data, params.logger, related_request_id=ctx.request_id)

    return LogRoute(level, send)


def _host_channel(ctx: Ctx) -> HostChannel:
    """How a downstream's elicitation or sampling request reaches this host, if it can."""
    caps = ctx.session.client_capabilities or types.ClientCapabilities()
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if isinstance(ctx.session, TaskSession):  # a host's task: its questions wait in the task
            return ctx.session.channel(caps, ctx.request_id)
        rounds = tuple(kind for kind, cap in (("elicitation", caps.elicitation), ("sampling", caps.sampling)) if cap)
        return modern_host(ctx.request_id, rounds)
    related = ServerMessageMetadata(related_request_id=ctx.request_id)

    async def elicit(params: types.ElicitRequestParams) -> types.ElicitResult:
        return await ctx.session.send_request(types.ElicitRequest(params=params), types.ElicitResult,
                                              metadata=related)

    async def sample(params: types.CreateMessageRequestParams) -> Any:
        wanted = types.CreateMessageResultWithTools if params.tools or params.tool_choice else types.CreateMessageResult
        return await ctx.session.send_request(types.CreateMessageRequest(params=params), wanted, metadata=related)

    return HostChannel(elicit=elicit if caps.elicitation else None, sample=sample if caps.sampling else None,
                       key=_host_connection(ctx))


def _renders_apps(ctx: Ctx) -> bool:
    """Whether this host negotiated MCP Apps: it gets app-only tools and keeps them from its model."""
    return apps.renders_apps(ctx.session.client_capabilities)


def _protocol_error(e: HubError) -> MCPError:
    if isinstance(e, DownstreamError) and e.code is not None and e.code not in (types.CONNECTION_CLOSED,):
        return MCPError(e.code, str(e))
    code = types.INVALID_PARAMS if isinstance(e, UnknownName | NotFound | InvalidInput) else types.INTERNAL_ERROR
    return MCPError(code, str(e))


def _refusing(identify: Callable[[Ctx], Identity]) -> Callable[[Ctx], Identity]:
    """``identify``, its refusal of a request without a caller an MCP error with its message, the same
    on every path that names a caller (handlers, middleware, tasks, both eras)."""

    def named(ctx: Ctx) -> Identity:
        try:
            return identify(ctx)
        except HubError as e:
            raise MCPError(types.INVALID_REQUEST, str(e)) from e

    return named


MEMO_ENTRIES = 256  # kept listings per endpoint; each may be a megabyte for a catalog of thousands of tools


class ListingMemo:
    """Server middleware: each list result as the SDK put it on the wire, kept per (method,
    protocol version, caller's role) until the catalog changes. A listing of 1,000 tools costs
    the SDK ~100 ms to validate and dump; the catalog only changes when a server does.

    A request is answered from the memo only where the SDK would have answered it the same way:
    a connection past its handshake and params that pass the spec's check; anything else takes
    the normal path, which produces the result (or error) and, for a result, fills the memo.
    """

    METHODS = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})

    def __init__(self, catalog: Surface, identify: Callable[[Ctx], Identity]) -> None:
        self.catalog, self.identify = catalog, identify
        self._memo: dict[tuple[str, str, str, bool, str | None, bool], dict[str, Any]] = {}
        self._generation = -1

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        if ctx.method not in self.METHODS or not self._plain(ctx):
            return await call_next(ctx)
        if self._generation != self.catalog.generation:
            self._memo.clear()
            self._generation = self.catalog.generation
        caller = self.identify(ctx)  # a user's own listing of a per_user server is theirs alone
        key = (ctx.method, ctx.protocol_version, caller.role, _renders_apps(ctx), self.catalog.listing_key(caller),
               _defers(self.catalog, ctx))
        if (hit := self._memo.get(key)) is not None:
            return dict(hit)  # the SDK's pipeline owns (and may stamp) the top-level dict
        generation = self._generation
        result = await call_next(ctx)
        if isinstance(result, dict) and generation == self.catalog.generation:
            if len(self._memo) >= MEMO_ENTRIES:  # lists particular to a person (their own listings, their daily
                del self._memo[next(iter(self._memo))]  # tools) are many on a big hub: the oldest goes
            self._memo[key] = dict(result)
        return result

    @staticmethod
    def _plain(ctx: Ctx) -> bool:
        connection = host_connection(ctx.session)
        if connection is None or not connection.initialize_accepted:
            return False
        try:
            spec.validate_client_request(ctx.method, ctx.protocol_version, ctx.params)
        except Exception:  # noqa: BLE001 - the normal path answers with the exact error
            return False
        return True


class _Handlers:
    """The hub's MCP request handlers: each names its caller with ``identify`` and asks ``catalog``."""

    def __init__(self, catalog: Surface, identify: Callable[[Ctx], Identity], tasks: TaskBoard | None) -> None:
        self.catalog, self.identify, self.tasks = catalog, identify, tasks

    def plain(self, ctx: Ctx) -> CallContext:  # requests that cannot ask the host anything back
        return CallContext(self.identify(ctx))

    async def list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = self.catalog.list_tools(self.identify(ctx), defers=_defers(self.catalog, ctx))
        if not _renders_apps(ctx):  # it would offer every listed tool to its model
            tools = [t for t in tools if apps.for_model(t)]
        if self.tasks is not None and ctx.protocol_version == LEGACY_VERSION:
            tools = with_task_support(tools)
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams,
                        ) -> types.CallToolResult | types.InputRequiredResult:
        async def progress(value: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(value, total, message)  # re-emitted under the host's token

        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # A host's task asks its questions itself (``TaskSession.channel``), so its call runs in the task
        # (cancelled with it), not parked on a bridge; only a parked call's resumption goes back there.
        resuming = params.request_state is not None or params.input_responses is not None
        rounds = modern and (resuming or not isinstance(ctx.session, TaskSession))
        call = CallContext(self.identify(ctx), progress=progress, logs=_log_route(ctx), host=_host_channel(ctx),
                           rounds=InputRounds(params.input_responses, params.request_state) if rounds else None)
        try:
            return await self.catalog.call_tool(params.name, params.arguments, call)
        except HubError as e:
            raise _protocol_error(e) from e

    async def set_log_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        state = getattr(_host_connection(ctx), "state", None)
        if state is not None:
            state[LOG_LEVEL] = params.level
        return types.EmptyResult()

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=self.catalog.listed("resources", self.identify(ctx)))

    async def list_templates(self, ctx: Ctx, params: types.PaginatedRequestParams | None,
                             ) -> types.ListResourceTemplatesResult:
        templates = self.catalog.listed("templates", self.identify(ctx))
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            return await self.catalog.read_resource(params.uri, self.plain(ctx))
        except HubError as e:
            raise _protocol_error(e) from e

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        session, host, uri = ctx.session, _host_connection(ctx), params.uri
        try:
            await self.catalog.subscribe(uri, host, lambda: session.send_resource_updated(uri), self.plain(ctx))
        except HubError as e:
            raise _protocol_error(e) from e
        if stack := getattr(host, "exit_stack", None):  # the host went away: drop its subscription
            stack.push_async_callback(self.catalog.unsubscribe, uri, host)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        try:
            await self.catalog.unsubscribe(params.uri, _host_connection(ctx))
        except HubError as e:
            raise _protocol_error(e) from e
        return types.EmptyResult()

    async def list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=self.catalog.listed("prompts", self.identify(ctx)))

    async def get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return await self.catalog.get_prompt(params.name, params.arguments, self.plain(ctx))
        except HubError as e:
            raise _protocol_error(e) from e

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context else None
        try:
            return await self.catalog.complete(params.ref, argument, context, self.plain(ctx))
        except (ServerNotReady, UnknownName):
            return types.CompleteResult(completion=types.Completion(values=[]))
        except HubError as e:
            raise _protocol_error(e) from e


def build_server(catalog: Surface, announcer: Announcer, *, name: str, version: str,
                 identify: Callable[[Ctx], Identity], instructions: str | None = None,
                 tasks: TaskBoard | None = None, first_list: FirstList | None = None) -> HubServer:
    """``identify(ctx)`` names the caller of each request; every handler passes it down explicitly.
    ``catalog`` is read only through ``Surface`` (a toolset's view defines each member scoped).
    ``tasks``: where calls hosts ask to run as tasks are held (``task_protocol.py``); None: no tasks.
    ``first_list``: holds a host's first tools/list while the servers start (``first_list.py``)."""

    identify = _refusing(identify)
    h = _Handlers(catalog, identify, tasks)
    handlers = {
        "on_list_tools": h.list_tools, "on_call_tool": h.call_tool, "on_list_resources": h.list_resources,
        "on_list_resource_templates": h.list_templates, "on_read_resource": h.read_resource,
        "on_subscribe_resource": h.subscribe, "on_unsubscribe_resource": h.unsubscribe,
        "on_list_prompts": h.list_prompts, "on_get_prompt": h.get_prompt, "on_completion": h.complete,
        "on_set_logging_level": h.set_log_level,
    }
    server = HubServer(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=catalog.input_schema,
        on_subscriptions_listen=announcer.listen(identify),  # per person: see upstream/listening.py
        **handlers,
    )
    server.extensions[apps.EXTENSION_ID] = apps.SERVER_SETTINGS  # relayed: see aggregation/apps.py
    server.add_notification_handler("notifications/initialized", types.NotificationParams, announcer.on_initialized)
    if first_list is not None:  # outermost: the hold comes before the hints and the memo look at the catalog
        server.middleware.append(first_list)
    server.middleware.append(CacheHints(catalog, identify))  # outside the memo: hints are per request
    server.middleware.append(ListingMemo(catalog, identify))
    if tasks is not None:  # innermost: a task's call runs the rest of the pipeline as any call does
        server.holds_tasks = True
        TaskProtocol(tasks, identify, catalog.task_support).install(server)
    if not spans_exported():  # no-op spans still cost (sdk.py); tracing is configured before the hub is built
        without_request_spans(server)
    return server
