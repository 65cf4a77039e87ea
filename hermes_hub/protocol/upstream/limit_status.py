"""HTTP 429 for a call a limit refused whole, where its rule says so (``guards.limits[].http_429``).

A call over a limit is a tool error a model can read (``pipeline/limits.py``). A rule with ``http_429``
asks for the HTTP answer gateways and clients back off on instead: a 2026-07-28 POST (one request, one
answer) whose own tools/call that rule refused is answered ``429 Too Many Requests`` with
``Retry-After``, and a JSON-RPC error carrying the same sentence (which limit, when it resets) and the
refusal's data, so a host built on an MCP SDK still shows why. ``LimitStatus`` is the ASGI middleware
that does it, for the call lane and the SDK's path alike. The limits step notes such a refusal on the
request's context (``limits.HTTP_REFUSALS``); nothing is read from the answer itself, so no downstream
result can make the hub answer 429. The calls an agent run makes are not the request's own and are
never noted. A handshake-era answer is an SSE stream whose status went out with its first event, so
those hosts get the tool error, as without the option.
"""

from __future__ import annotations

import json

import mcp.types as types
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_hub.core.pipeline.limits import HTTP_REFUSALS, LIMIT_META, Refusal

_VERSIONS = frozenset(v.encode() for v in MODERN_PROTOCOL_VERSIONS)


class LimitStatus:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or \
                dict(scope["headers"]).get(b"mcp-protocol-version") not in _VERSIONS:
            await self.app(scope, receive, send)
            return
        refused: list[Refusal] = []
        held: list[Message] = []

        async def answering(message: Message) -> None:
            if message["type"] == "http.response.start" and refused:  # noted before any answer starts
                kind = dict(message.get("headers") or []).get(b"content-type", b"")
                if message["status"] == 200 and kind.startswith(b"application/json"):
                    held.append(message)  # until its body is in: the request id is there
                    return
            elif message["type"] == "http.response.body" and held:
                start = held.pop()
                if not message.get("more_body", False) and (rewritten := _error(message, refused[0])):
                    await send({"type": "http.response.start", "status": 429, "headers": [
                        (b"content-type", b"application/json"), (b"content-length", str(len(rewritten)).encode()),
                        (b"retry-after", str(refused[0].retry_after).encode())]})
                    await send({"type": "http.response.body", "body": rewritten})
                    return
                await send(start)
            await send(message)

        token = HTTP_REFUSALS.set(refused)
        try:
            await self.app(scope, receive, answering)
        finally:
            HTTP_REFUSALS.reset(token)


def _error(message: Message, refusal: Refusal) -> bytes | None:
    """The JSON-RPC error answering the request in ``message``'s body (its id kept), or None if the body
    is not a JSON-RPC result."""
    try:
        reply = json.loads(message.get("body", b""))
    except (ValueError, RecursionError):
        return None
    if not isinstance(reply, dict) or "result" not in reply:
        return None
    error = {"code": types.INTERNAL_ERROR, "message": refusal.message(), "data": {LIMIT_META: refusal.said()}}
    return json.dumps({"jsonrpc": "2.0", "id": reply.get("id"), "error": error}, separators=(",", ":")).encode()
