"""tools/call from a 2026-07-28 host over streamable HTTP, served beside the SDK's app.

A 2026-07-28 POST is self-contained: one JSON-RPC request in, one response out, no session. The
SDK serves it through its session manager, a nested Starlette app and its request runner; for a
plain ``tools/call`` that is most of what the hub's HTTP side costs a call. ``HttpLane`` is an
ASGI middleware inside the hub's authentication and ``JsonRpcGate`` (so the caller is known and
the body bounded, screened and read) that takes a request the SDK would answer the same way:

- a POST to an endpoint's path (``/mcp``, ``/mcp/<toolset>``) naming a 2026-07-28 version in
  ``MCP-Protocol-Version``, with no ``Mcp-Session-Id``, a JSON content type and an ``Accept`` of
  both JSON and SSE;
- a ``tools/call`` whose envelope, routing headers (none repeated) and ``Mcp-Param-*`` headers
  pass the SDK's own checks, and that ``call_lane.plain_call`` finds plain (no progress token, log
  level, task, input-required answers, cache hints or exported spans).

Anything else, and everything a check refuses, goes on to the SDK untouched, which answers it as
before (with the exact error). A taken call runs ``Catalog.call_tool`` with the ``CallContext`` the
SDK path builds and is answered as the SDK answers it: JSON with the error table's status if it
ends within 15 s, else an SSE stream kept open by comment pings, ending with the response. A
client that disconnects cancels its call, as on the SDK's path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import mcp.types as types
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_hub.infra.call import CallContext, InputRounds
from hermes_hub.services.identity import IDENTITY_KEY
from hermes_hub.protocol.upstream.call_lane import error_data, host_channel, plain_call, tools_call, wire
from hermes_hub.protocol.upstream.server import _protocol_error

log = logging.getLogger("hermes_hub.protocol.upstream")
PING_INTERVAL: Final = 15.0  # the SDK's: JSON if the call ends sooner, else SSE with keep-alive pings
_PARAM_PREFIX: Final = MCP_PARAM_HEADER_PREFIX.lower()
_SSE_HEADERS: Final = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache, no-transform"),
                       (b"connection", b"keep-alive"), (b"x-accel-buffering", b"no")]


class HttpLane:
    def __init__(self, app: ASGIApp, endpoints: Mapping[str | None, Any]) -> None:
        """``endpoints``: the hub's, each with its ``path``, ``view`` and ``server``."""
        self.app, self.endpoints = app, endpoints
        self._paths: dict[str, Any] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        endpoint = self._endpoint(scope["path"])
        headers = _modern(scope) if endpoint is not None else None
        if headers is None:
            await self.app(scope, receive, send)
            return
        first = await receive()  # JsonRpcGate has read the body: it is all in this message
        taken = None
        if first["type"] == "http.request" and not first.get("more_body", False):
            try:
                taken = self._takes(endpoint, scope, headers, first.get("body", b""))
            except Exception:  # noqa: BLE001 - the SDK's path answers it
                log.exception("the HTTP call lane could not judge a tools/call; the SDK's path serves it")
        if taken is None:
            await self.app(scope, _replay(first, receive), send)
            return
        await self._serve(endpoint, scope, receive, send, *taken)

    def _endpoint(self, path: str) -> Any:
        if not self._paths:
            self._paths = {ep.path: ep for ep in self.endpoints.values()}
        return self._paths.get(path)

    def _takes(self, endpoint: Any, scope: Scope, headers: dict[str, str], body: bytes,
               ) -> tuple[types.RequestId, dict[str, Any], InboundModernRoute] | None:
        if b'"tools/call"' not in body or (scope.get("state") or {}).get(IDENTITY_KEY) is None:
            return None
        if (call := tools_call(body)) is None:
            return None
        request_id, params = call
        if find_duplicated_routing_header((k.decode("latin-1"), "") for k, _ in scope["headers"]) is not None:
            return None
        route = plain_call(endpoint.server, "tools/call", params, headers)
        if route is None:
            return None
        arguments = params.get("arguments") or {}
        if arguments or any(k.startswith(_PARAM_PREFIX) for k in headers):  # the SDK's Mcp-Param-* check
            schema = endpoint.server.get_tool_input_schema(params["name"])
            if schema is not None and validate_mcp_param_headers(schema, arguments, Headers(scope=scope)) is not None:
                return None
        return request_id, params, route

    async def _serve(self, endpoint: Any, scope: Scope, receive: Receive, send: Send,
                     request_id: types.RequestId, params: dict[str, Any], route: InboundModernRoute) -> None:
        caller = scope["state"][IDENTITY_KEY]
        ctx = CallContext(caller, host=host_channel(route, request_id), rounds=InputRounds(None, None))
        reply: dict[str, Any] = {}
        done = anyio.Event()

        async def call() -> None:
            try:
                result = await endpoint.view.call_tool(params["name"], params.get("arguments"), ctx)
                reply.update(jsonrpc="2.0", id=request_id, result=wire(result, route.protocol_version,
                                                                        endpoint.server))
            except Exception as exc:  # noqa: BLE001 - mapped as the SDK maps a handler's exception
                error = error_data(exc, _protocol_error)
                reply.update(jsonrpc="2.0", id=request_id, error=error.model_dump(mode="json", exclude_none=True))
            done.set()

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()  # the host gave up: so does its call

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            tg.start_soon(watch_disconnect)
            with anyio.move_on_after(PING_INTERVAL):
                await done.wait()
            if done.is_set():
                await _json(send, reply)
            else:  # a long call: commit to SSE and ping so no proxy's idle timeout closes the stream
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                while not done.is_set():
                    await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})
                    with anyio.move_on_after(PING_INTERVAL):
                        await done.wait()
                data = json.dumps(reply, separators=(",", ":"))
                await send({"type": "http.response.body", "body": f"event: message\r\ndata: {data}\r\n\r\n".encode()})
            tg.cancel_scope.cancel()


def _modern(scope: Scope) -> dict[str, str] | None:
    """The request's headers if it is a 2026-07-28 POST the lane may take, judged by its headers."""
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    if headers.get("mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS or "mcp-session-id" in headers:
        return None
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return None
    accept = {t.split(";")[0].strip().lower() for t in headers.get("accept", "").split(",")}
    if not ({"application/json", "application/*", "*/*"} & accept and {"text/event-stream", "text/*", "*/*"} & accept):
        return None
    return headers


async def _json(send: Send, reply: dict[str, Any]) -> None:
    error = reply.get("error")
    status = ERROR_CODE_HTTP_STATUS.get(error["code"], 200) if error else 200
    body = json.dumps(reply, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _replay(first: Message, receive: Receive) -> Receive:
    pending = [first]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed
