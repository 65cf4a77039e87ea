"""What a READY connection forwards: tool calls (on the bridge when the host's answers must find it
again), resource reads and subscriptions, prompts and completions, with the SDK's errors reworded as
``DownstreamError``s that say which setting to change.

``Forwarding`` is half of ``Connection``: the state machine (``connection``) owns the session, this
half only uses it through ``ready_client()``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import mcp.types as types
from mcp import Client, MCPError
from pydantic import ValidationError
from mcp.client.extension import ClaimContext
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.bridge import Bridge
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.deadline import Deadline, idle_timeout
from hermes_hub.downstream.http_status import HTTP_STATUS_KEY, RETRY_AFTER_KEY
from hermes_hub.downstream.logs import LogRelay
from hermes_hub.downstream.relay import Relay
from hermes_hub.downstream.tasks import CreatedTask, follow
from hermes_hub.downstream.transports import Link
from hermes_hub.downstream.watchers import NotifyFn, Watchers
from hermes_hub.infra.errors import DownstreamError
from hermes_hub.infra.telemetry.tracing import enabled as spans_exported


class Forwarding:
    """Requests to the server of a connection that is READY (else ``ServerNotReady``)."""

    name: str
    cfg: ServerConfig
    bridge: Bridge
    relay: Relay
    logs: LogRelay
    watchers: Watchers
    link: Link
    capabilities: Any

    def ready_client(self) -> Client:
        raise NotImplementedError

    def _gone(self) -> str:
        raise NotImplementedError

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext
    ) -> types.CallToolResult | types.InputRequiredResult:
        if ctx.rounds is not None and (self.bridge.owns(ctx.rounds) or (
                ctx.host.in_rounds and self.ready_client().protocol_version not in MODERN_PROTOCOL_VERSIONS)):
            # A 2026-07-28 host that answers questions and a server that may push them: run the call on
            # the bridge (a host's answer goes there even if the server restarted meanwhile: it says so).
            # A host that declared it answers none is never sent a round it cannot answer: a pushed
            # question is refused with the reason, as for any host that cannot be asked.
            return await self.bridge.call(ctx, lambda parked: self._call(name, arguments, parked))
        return await self._call(name, arguments, ctx)

    async def _call(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext
    ) -> types.CallToolResult | types.InputRequiredResult:
        client, lane = self.ready_client(), self.link.lane  # one connection's, even if it restarts meanwhile
        deadline = Deadline(idle_timeout(self.cfg.timeout, self.cfg.tool_timeouts, name), self.cfg.max_timeout,
                            ctx.deadline)
        try:
            with self.relay.calling(ctx, deadline), deadline.scope():
                meta = await self.logs.ask(client, ctx.logs)
                # The SDK's own read timeout is only a backstop: ``deadline`` decides, progress resets it.
                common = {"read_timeout_seconds": deadline.cap + 5, "meta": meta,
                          "progress_callback": deadline.on_progress(ctx.progress)}
                rounds = ctx.rounds
                if rounds is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    out = await client.session.call_tool(  # 2026 on both sides: rounds pass through
                        name, arguments, allow_input_required=True, input_responses=rounds.input_responses,
                        request_state=rounds.request_state, allow_claimed=True, **common)
                    if isinstance(out, CreatedTask):  # the server made it a task: followed to its end
                        return await follow(out, ClaimContext(session=client.session, tool_name=name,
                                                              read_timeout_seconds=None))
                    return out  # type: ignore[return-value]
                if (lane is not None and not spans_exported()  # a handshake-era child, nothing traced
                        and client.protocol_version not in MODERN_PROTOCOL_VERSIONS):
                    raw = await lane.call(name, arguments, meta=meta, on_progress=common["progress_callback"])
                    return await _checked(client, name, raw)
                return await client.call_tool(name, arguments, **common)
        except MCPError as e:
            raise self._downstream_error(e) from e
        except RuntimeError as e:  # the SDK's check of the result against the tool's output schema
            if "structured content" not in str(e):
                raise
            raise DownstreamError(self.name, f"{str(e).splitlines()[0]}; the result breaks the tool's own output "
                                  "schema, so the hub refused it (the server needs fixing)") from e
        # Only reached when a deadline cancelled the call.
        if deadline.expired == "caller":
            raise DownstreamError(self.name, f"tool '{name}' was cancelled: its caller's deadline passed",
                                  types.REQUEST_TIMEOUT)
        what, key = (f"no progress for {deadline.idle:g}s", "timeout (or tool_timeouts)") \
            if deadline.expired == "idle" else (f"still running after {deadline.cap:g}s", "max_timeout")
        raise DownstreamError(self.name, f"tool '{name}' timed out: {what}; the call was cancelled. "
                              f"Raise mcpServers.{self.name}.{key} if it needs longer", types.REQUEST_TIMEOUT)

    async def subscribe_resource(self, uri: str, watcher: Hashable, notify: NotifyFn) -> None:
        await self.watchers.add(self.ready_client(), self.capabilities, uri, watcher, notify)

    async def unsubscribe_resource(self, uri: str, watcher: Hashable) -> None:
        await self.watchers.remove(self.ready_client, uri, watcher)

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        try:
            return await self.ready_client().read_resource(uri)
        except MCPError as e:
            raise self._downstream_error(e) from e

    async def get_prompt(self, name: str, arguments: dict[str, str] | None, ctx: CallContext,
                         ) -> types.GetPromptResult:
        try:
            return await self.ready_client().get_prompt(name, arguments)
        except MCPError as e:
            raise self._downstream_error(e) from e

    async def complete(
        self, ref: types.PromptReference | types.ResourceTemplateReference, argument: dict[str, str],
        context: dict[str, str] | None, ctx: CallContext,
    ) -> types.CompleteResult:
        try:
            return await self.ready_client().complete(ref, argument, context_arguments=context)
        except MCPError as e:
            raise self._downstream_error(e) from e

    def _downstream_error(self, e: MCPError) -> DownstreamError:
        if e.code == types.REQUEST_TIMEOUT:
            return DownstreamError(self.name, f"timed out after {self.cfg.timeout:g}s "
                                   f"(mcpServers.{self.name}.timeout)", e.code)
        if self.link.needs_auth:
            return DownstreamError(self.name, self.link.needs_auth, e.code)
        if e.code == types.CONNECTION_CLOSED or self.link.closed.is_set():
            return DownstreamError(self.name, f"connection lost during the request: {self._gone()}; the call was "
                                   "cancelled, call the tool again", e.code)
        said = e.data if isinstance(e.data, dict) else {}  # see downstream/http_status.py
        return DownstreamError(self.name, e.message, e.code, http_status=said.get(HTTP_STATUS_KEY),
                               retry_after=said.get(RETRY_AFTER_KEY))


async def _checked(client: Client, name: str, raw: dict[str, Any]) -> types.CallToolResult:
    """A lane's answer as ``client.call_tool`` returns it: a ``CallToolResult``, checked against the
    tool's output schema unless it is an error (the session's own check, and its RuntimeError)."""
    try:
        result = types.CallToolResult.model_validate(raw, by_name=False)
    except ValidationError as e:
        raise MCPError(types.INTERNAL_ERROR, f"the server's tools/call result is not valid: {e.errors()[0]['msg']}") from e
    if not result.is_error:
        await client.session.validate_tool_result(name, result)
    return result
