"""tools/call from a 2026-07-28 host over stdio, served beside the SDK's request dispatch.

A stdio host's requests reach the SDK server through a stream; ``CallLane`` wraps that stream and
takes the ``tools/call`` requests that the SDK would hand, validated, straight to the hub's handler:
a 2026-07-28 connection, a request whose envelope and params pass the SDK's own checks, with no
progress token, log level or input-required answers (those need the SDK's per-request session).
Everything else, and everything the checks refuse, goes on to the SDK unchanged, which answers it
as before. A taken call runs the same ``Catalog.call_tool`` with the same ``CallContext`` the
SDK path builds, and its result is shaped for the wire the way the SDK shapes it.

Measured (bench/README.md): a quarter to a third of the hub's CPU per call went to the SDK's
dispatch of one request (a replay hop, a task, a connection and runner, validation twice).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pydantic_core
from anyio.abc import ObjectReceiveStream, ObjectSendStream, TaskGroup
from mcp import MCPError
from mcp.shared.inbound import InboundLadderRejection, InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params, handler_exception_to_error_data
from mcp.shared.message import SessionMessage
from mcp.types import methods as spec
from mcp_types import CORE_RESULT_TYPES
from pydantic import ValidationError

from hermes_hub.infra.call import CallContext, HostChannel, Identity, InputRounds, modern_host
from hermes_hub.infra.errors import HubError
from hermes_hub.infra.sdk import WriteLine, has_modern_envelope, unwritable  # the SDK's own era test (private; see sdk.py)
from hermes_hub.infra.telemetry.tracing import enabled as spans_exported
from hermes_hub.protocol.upstream.surface import Surface
from hermes_hub.protocol.upstream.task_protocol import EXTENSION_ID as TASKS_EXTENSION

log = logging.getLogger("hermes_hub.protocol.upstream")
Stream = ObjectReceiveStream[SessionMessage | Exception]
ProtocolError = Callable[[HubError], MCPError]


class CallLane:
    """A receive stream for the SDK server that serves eligible ``tools/call`` requests itself."""

    def __init__(self, inner: Stream, write: ObjectSendStream[SessionMessage], tg: TaskGroup, *,
                 catalog: Surface, server: Any, caller: Identity, protocol_error: ProtocolError,
                 write_line: WriteLine | None = None) -> None:
        self.inner, self.write, self.tg = inner, write, tg
        self.catalog, self.server, self.caller = catalog, server, caller
        self.protocol_error, self.write_line = protocol_error, write_line
        self.modern: bool | None = None  # decided by the first request, as the SDK decides the era
        self.in_flight: dict[types.RequestId, anyio.CancelScope] = {}

    def take_line(self, line: bytes) -> bool:
        """Serve the wire line ``line`` (screened, not yet parsed) here if it is a plain ``tools/call``
        of a 2026-07-28 connection; False leaves it to the SDK's path (which may still bring it here)."""
        if not self.modern or self.write_line is None or b'"tools/call"' not in line:
            return False
        if (call := tools_call(line)) is None:
            return False
        request_id, params = call
        try:
            route = None if request_id in self.in_flight else plain_call(self.server, "tools/call", params)
        except Exception:  # noqa: BLE001 - never the pump's end: the SDK's path answers it
            log.exception("the call lane could not judge a tools/call; the SDK's path serves it")
            return False
        if route is None:
            return False
        self.tg.start_soon(self._serve, request_id, params, route)
        return True

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, SessionMessage):
                return item
            msg = item.message
            if isinstance(msg, types.JSONRPCRequest):
                if self.modern is None:
                    self.modern = msg.method != "initialize" and has_modern_envelope(msg.params)
                elif self.modern and msg.method == "tools/call" and (route := self._takes(msg)):
                    self.tg.start_soon(self._serve, msg.id, msg.params or {}, route)
                    continue
            elif isinstance(msg, types.JSONRPCNotification) and msg.method == "notifications/cancelled":
                scope = self.in_flight.get(cancelled_request_id_from_params(msg.params))  # type: ignore[arg-type]
                if scope is not None:  # the host gave up on a call taken here: it gets no answer
                    scope.cancel()
                    continue
            return item

    def __aiter__(self) -> CallLane:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _takes(self, msg: types.JSONRPCRequest) -> InboundModernRoute | None:
        """The request's route if this lane serves it as the SDK would, else None."""
        if msg.id in self.in_flight:
            return None
        return plain_call(self.server, msg.method, msg.params or {})

    async def _serve(self, request_id: types.RequestId, params: dict[str, Any], route: InboundModernRoute) -> None:
        ctx = CallContext(self.caller, host=host_channel(route, request_id), rounds=InputRounds(None, None))
        reply: dict[str, Any] | None = None
        with anyio.CancelScope() as scope:
            self.in_flight[request_id] = scope
            try:
                result = await self.catalog.call_tool(params["name"], params.get("arguments"), ctx)
                answer = wire(result, route.protocol_version, self.server)
                reply = {"jsonrpc": "2.0", "id": request_id, "result": answer}
            except Exception as exc:  # noqa: BLE001 - mapped as the SDK maps a handler's exception
                error = error_data(exc, self.protocol_error).model_dump(mode="json", by_alias=True, exclude_unset=True)
                reply = {"jsonrpc": "2.0", "id": request_id, "error": error}
            finally:
                del self.in_flight[request_id]
        if reply is None:  # cancelled
            return
        try:
            if self.write_line is not None:
                await self.write_line(_line(reply))
            else:
                await self.write.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(reply)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # the host is gone


def _line(reply: dict[str, Any]) -> bytes:
    """``reply`` framed as the SDK frames a message; one pydantic cannot write (a lone surrogate) goes
    out as an error for its request, as ``sdk.stdio_streams`` writes it."""
    try:
        return pydantic_core.to_json(reply) + b"\n"
    except ValueError:
        return unwritable(reply["id"])


def tools_call(text: bytes) -> tuple[types.RequestId, dict[str, Any]] | None:
    """(id, params) if ``text`` is one JSON-RPC ``tools/call`` request, parsed as strictly as the SDK
    parses a message (``pydantic_core``: a lone surrogate is refused), else None."""
    try:
        request = pydantic_core.from_json(text)
    except ValueError:
        return None
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0" or request.get("method") != "tools/call":
        return None
    request_id, params = request.get("id"), request.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    return request_id, params


def plain_call(server: Any, method: str, params: dict[str, Any],
               headers: dict[str, str] | None = None) -> InboundModernRoute | None:
    """The route of a ``tools/call`` a lane may serve exactly as the SDK would, else None: no progress
    token, log level, task or input-required answers (those need the SDK's per-request session), no
    cache hints or exported spans, and an envelope and params that pass the SDK's own checks
    (``headers``: the HTTP request's, which the envelope must agree with)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" in meta or types.LOG_LEVEL_META_KEY in meta:
        return None
    if TASKS_EXTENSION in ((meta.get(types.CLIENT_CAPABILITIES_META_KEY) or {}).get("extensions") or {}):
        return None  # the hub may answer with a task: the SDK's path, through task_protocol.py
    if params.get("inputResponses") is not None or params.get("requestState") is not None:
        return None
    if server.cache_hints.get("tools/call") is not None:
        return None
    if spans_exported():  # the SDK's path makes the request's span and continues the host's traceparent
        return None
    route = classify_inbound_request({"method": method, "params": params}, headers=headers)
    if isinstance(route, InboundLadderRejection):
        return None
    try:
        spec.validate_client_request(method, route.protocol_version, params)
        types.CallToolRequestParams.model_validate(params, by_name=False)
    except Exception:  # noqa: BLE001 - the SDK answers with the exact error
        return None
    return route


def host_channel(route: InboundModernRoute, key: Any) -> HostChannel:
    """A 2026-07-28 host's way back, as ``server._host_channel`` builds it: the kinds of question it
    declared it answers as input-required rounds."""
    caps = route.client_capabilities if isinstance(route.client_capabilities, dict) else {}
    return modern_host(key, tuple(kind for kind in ("elicitation", "sampling") if caps.get(kind) is not None))


def error_data(exc: Exception, protocol_error: ProtocolError) -> types.ErrorData:
    """A handler's exception as the SDK's runner puts it on the wire."""
    if isinstance(exc, HubError):
        exc = protocol_error(exc)
    error = handler_exception_to_error_data(exc)
    if error is None:
        log.exception("tools/call handler raised")
        error = types.ErrorData(code=types.INTERNAL_ERROR, message="Internal server error")
    return error


def wire(result: types.CallToolResult | types.InputRequiredResult, version: str, server: Any) -> dict[str, Any]:
    """The result as the SDK's runner puts it on the wire (``ServerRunner._serialize``)."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    result_type = dumped.get("resultType")
    if not isinstance(result_type, str) or result_type in CORE_RESULT_TYPES:
        try:
            dumped = spec.serialize_server_result("tools/call", version, dumped)
        except ValidationError:
            log.exception("handler for 'tools/call' returned an invalid result")
            raise MCPError(code=types.INTERNAL_ERROR, message="Handler returned an invalid result") from None
    dumped.setdefault("resultType", "complete")
    meta = dumped.get("_meta")
    if meta is None or (isinstance(meta, dict) and meta.get(types.SERVER_INFO_META_KEY) is None):
        dumped["_meta"] = {**(meta or {}), types.SERVER_INFO_META_KEY: server.server_info_stamp}
    return dumped


@asynccontextmanager
async def call_lane(hub: Any, read: Stream, write: ObjectSendStream[SessionMessage],
                    endpoint: Any = None, write_line: WriteLine | None = None) -> AsyncIterator[Any]:
    """``read`` for ``hub``'s SDK server, with eligible ``tools/call`` requests served beside it;
    the caller is the hub's local user, as for every stdio request."""
    from hermes_hub.protocol.upstream.server import _protocol_error

    async with anyio.create_task_group() as tg:
        catalog, server = (hub.catalog, hub.server) if endpoint is None else (endpoint.view, endpoint.server)
        yield CallLane(read, write, tg, catalog=catalog, server=server, caller=hub.identify(None),
                       protocol_error=_protocol_error, write_line=write_line)
        tg.cancel_scope.cancel()  # the host's stream ended: calls still running are abandoned
