"""What the SDK's HTTP endpoint would get wrong about a malformed POST, answered before it: a body
over the size limit (the SDK says so in plain text), a request whose ``id`` is unusable (the
SDK's handshake-era path reads it as a notification and answers 202), one nested too deeply or
holding a lone surrogate (see ``rejection.screen``), and, in a handshake-era session, a request
reusing the id of one still in flight (the SDK routes both answers to one stream: the first
caller would wait forever). Each gets a 4xx with a JSON-RPC error body saying what to fix.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.dispatcher import coerce_request_id
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_hub.protocol.upstream.ownership import principal
from hermes_hub.protocol.upstream.rejection import error_line, misread_request, screen

MAX_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's own limit, so both agree


class JsonRpcGate:
    def __init__(self, app: ASGIApp, path: str = "/mcp", max_body: int = MAX_BODY) -> None:
        self.app, self.path, self.max_body = app, path, max_body
        self._in_flight: set[tuple[str, bytes, int | str]] = set()  # (caller, session, request id)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith(self.path):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body:
            await _answer(send, 413, self._too_large())
            return
        body, more, tail = bytearray(), True, None
        while more:
            message = await receive()
            if message["type"] != "http.request":
                tail = message  # e.g. the client went away: the app sees it after the body
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _answer(send, 413, self._too_large())
                return
        data = bytes(body)
        if (answer := screen(data)) is not None:
            await (_answer(send, 400, answer) if answer else _accepted(send))
            return
        if b'"id"' in data and (answer := misread_request(data)) is not None:
            await _answer(send, 400, answer)
            return
        key = _session_request(scope, data)
        if key is not None and key in self._in_flight:
            await _answer(send, 400, error_line(key[2], types.INVALID_REQUEST, f"Invalid request: id {key[2]!r} is "
                                                "already used by a request in flight in this session; use a new id"))
            return
        if key is None:
            await self.app(scope, _replay(data, tail, receive), send)
            return
        self._in_flight.add(key)

        async def releasing(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self._in_flight.discard(key)  # before the caller can read the end and reuse the id
            await send(message)

        try:
            await self.app(scope, _replay(data, tail, receive), releasing)
        finally:
            self._in_flight.discard(key)

    def _too_large(self) -> bytes:
        return error_line(None, types.INVALID_REQUEST, f"Invalid request: the body is larger than "
                          f"{self.max_body // (1 << 20)} MiB; send large content as a resource or in smaller pieces")


def _session_request(scope: Scope, data: bytes) -> tuple[str, bytes, int | str] | None:
    """(caller, session id, request id) of a request in a handshake-era session, else None. The caller
    is part of the key: another caller presenting the session's id must not learn which ids are in
    flight there (the session answers them 404, as an unknown session; see ``ownership``)."""
    session = dict(scope["headers"]).get(b"mcp-session-id")
    if not session or b'"method"' not in data:
        return None
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    msg_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    return principal(scope), session, coerce_request_id(msg_id)  # "7" and 7 are one id to the SDK


def _replay(body: bytes, tail: Message | None, receive: Receive) -> Receive:
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if tail is not None:
        pending.append(tail)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _accepted(send: Send) -> None:
    await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
