"""The transport-free MCP server hosts talk to: the catalog behind low-level ``Server`` handlers.

Both protocol eras are served by the same object; stdio and HTTP only mount it (see ``app.py``,
``stdio.py``). Every list is read from the catalog per request, so a server becoming ready shows
up at once, and hosts are told with list_changed on both eras' channels (``Announcer``).
"""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
from mcp import MCPError
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)

from hermes_hub.aggregation.catalog import Catalog
from hermes_hub.errors import DownstreamError, HubError, ServerNotReady, UnknownName

log = logging.getLogger("hermes_hub.upstream")
Ctx = ServerRequestContext[Any]


class Announcer:
    """Tells every connected host that a list changed: 2026 hosts via the subscription bus,
    handshake-era hosts on the session they opened (captured at ``notifications/initialized``)."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.legacy_sessions: set[Any] = set()

    async def on_initialized(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        session = ctx.session
        self.legacy_sessions.add(session)
        # Drop the session when its connection ends (private attribute; see mcp-sdk notes, section 2).
        conn = getattr(session, "_connection", None)
        if conn is not None:
            conn.exit_stack.callback(self.legacy_sessions.discard, session)

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
    """Advertise listChanged to handshake-era hosts on every transport (the SDK passes no options)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        opts = notification_options or NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True
        )
        return super().create_initialization_options(opts, *args, **kwargs)


def _protocol_error(e: HubError) -> MCPError:
    if isinstance(e, DownstreamError) and e.code is not None and e.code not in (types.CONNECTION_CLOSED,):
        return MCPError(e.code, str(e))
    code = types.INVALID_PARAMS if isinstance(e, UnknownName) else types.INTERNAL_ERROR
    return MCPError(code, str(e))


def build_server(catalog: Catalog, announcer: Announcer, *, name: str, version: str,
                 instructions: str | None = None) -> HubServer:
    async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=catalog.list_tools())

    async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        async def progress(value: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(value, total, message)  # re-emitted under the host's token

        try:
            return await catalog.call_tool(params.name, params.arguments, progress)
        except HubError as e:
            raise _protocol_error(e) from e

    async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[e.item for e in catalog.resources.values()])

    async def list_templates(ctx: Ctx, params: types.PaginatedRequestParams | None,
                             ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[e.item for e in catalog.templates.values()])

    async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            return await catalog.read_resource(params.uri)
        except HubError as e:
            raise _protocol_error(e) from e

    async def list_prompts(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[e.item for e in catalog.prompts.values()])

    async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return await catalog.get_prompt(params.name, params.arguments)
        except HubError as e:
            raise _protocol_error(e) from e

    async def complete(ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context else None
        try:
            return await catalog.complete(params.ref, argument, context)
        except (ServerNotReady, UnknownName):
            return types.CompleteResult(completion=types.Completion(values=[]))
        except HubError as e:
            raise _protocol_error(e) from e

    server = HubServer(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=catalog.input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_subscriptions_listen=ListenHandler(announcer.bus),
    )
    server.add_notification_handler("notifications/initialized", types.NotificationParams, announcer.on_initialized)
    return server
