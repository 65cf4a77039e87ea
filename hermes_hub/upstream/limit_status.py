"""HTTP 429 for a call a limit refused whole, where its rule says so (``guards.limits[].http_429``).

A call over a limit is a tool error a model can read (``pipeline/limits.py``). A rule with ``http_429``
asks for the HTTP answer gateways and clients back off on instead: a 2026-07-28 POST (one request, one
answer) whose tools/call that rule refused is answered ``429 Too Many Requests`` with ``Retry-After``,
and a JSON-RPC error carrying the same sentence (which limit, when it resets) and the refusal's data,
so a host built on an MCP SDK still shows why. ``LimitStatus`` is the ASGI middleware that does it, for
the call lane and the SDK's path alike: it holds back the start of a JSON answer to such a POST until
its body is in, and rewrites only a refusal of such a rule. A handshake-era answer is an SSE stream
whose status went out with its first event, so those hosts get the tool error, as without the option.
"""

from __future__ import annotations

import json

import mcp.types as types
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_hub.pipeline.limits import LIMIT_META

_MARK = b'"http_429":true'
_VERSIONS = frozenset(v.encode() for v in MODERN_PROTOCOL_VERSIONS)


class LimitStatus:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or \
                dict(scope["headers"]).get(b"mcp-protocol-version") not in _VERSIONS:
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def answering(message: Message) -> None:
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers") or []).get(b"content-type", b"")
                if message["status"] == 200 and kind.startswith(b"application/json"):
                    held.append(message)  # until its body shows whether it is such a refusal
                    return
            elif message["type"] == "http.response.body" and held:
                start = held.pop()
                body = message.get("body", b"")
                if not message.get("more_body", False) and _MARK in body and (answer := _refusal(body)) is not None:
                    retry_after, rewritten = answer
                    await send({"type": "http.response.start", "status": 429, "headers": [
                        (b"content-type", b"application/json"), (b"content-length", str(len(rewritten)).encode()),
                        (b"retry-after", str(retry_after).encode())]})
                    await send({"type": "http.response.body", "body": rewritten})
                    return
                await send(start)
            await send(message)

        await self.app(scope, receive, answering)


def _refusal(body: bytes) -> tuple[int, bytes] | None:
    """(Retry-After, the JSON-RPC error) if ``body`` answers a tools/call a rule with ``http_429`` refused."""
    try:
        reply = json.loads(body)
    except (ValueError, RecursionError):
        return None
    result = reply.get("result") if isinstance(reply, dict) else None
    meta = ((result.get("_meta") or {}).get(LIMIT_META) or {}) if isinstance(result, dict) else {}
    if not (isinstance(meta, dict) and meta.get("http_429") is True and result.get("isError") is True):
        return None
    text = " ".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))
    retry_after = meta.get("retry_after")
    retry_after = retry_after if isinstance(retry_after, int) and retry_after > 0 else 1
    error = {"code": types.INTERNAL_ERROR, "message": text, "data": {LIMIT_META: meta}}
    return retry_after, json.dumps({"jsonrpc": "2.0", "id": reply.get("id"), "error": error},
                                   separators=(",", ":")).encode()
