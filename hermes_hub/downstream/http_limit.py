"""An HTTP server's answers capped at ``hub.max_message_bytes`` as they stream in.

    http = httpx2.AsyncClient(transport=Capped(httpx2.AsyncHTTPTransport(), "github", limit))  # ``transports``
    msg = plain(msg)  # the SDK's wording around the error, taken off (``transports._EndWatch``)

The SDK's streamable HTTP client reads a JSON answer whole (``response.aread()``, no limit: issue 30
saw 200 MB answers read whole before the catalog cut them). ``Capped`` wraps each response's byte
stream. A JSON body (or any other but SSE) past ``limit`` bytes raises ``MessageTooBig`` at that byte,
or at its first read when its Content-Length says so; the SDK answers the call that POST carried with
an error of its own wording around ours (``Failed to parse JSON response: …``), and ``plain`` keeps
ours only. An SSE stream is passed on one whole event at a time: an event past ``limit`` is thrown
away as it streams, up to its blank line, and an error answer to its request takes its place, so the
stream goes on (a legacy SSE server has one stream for everything).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp.types as types
from mcp.shared.message import SessionMessage

from hermes_hub.downstream.framing import HEAD, TAIL, Dropped, too_big

log = logging.getLogger("hermes_hub.downstream")
_MARK, _START = "(hub.max_message_bytes)", "answered with a message of more than"
_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")  # an SSE event ends at a blank line


class MessageTooBig(httpx2.SSEError, httpx2.StreamError):
    """One answer of an HTTP server over the limit: the SDK handles it where a stream breaks."""

    def __init__(self, message: str) -> None:
        httpx2.SSEError.__init__(self, message)


class _Quiet(logging.Filter):
    """The SDK logs a traceback for every JSON answer it could not read; ours said why in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], MessageTooBig))


logging.getLogger("mcp.client.streamable_http").addFilter(_Quiet())


class _CappedBody(httpx2.AsyncByteStream):
    """A body past ``limit`` raises ``MessageTooBig`` at that byte (or at once, if its length says so)."""

    def __init__(self, inner: Any, server: str, limit: int, declared: int | None) -> None:
        self._inner, self._server, self._limit, self._declared = inner, server, limit, declared

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._declared is not None and self._declared > self._limit:
            raise _refuse(self._server, self._limit)
        run = 0
        async for chunk in self._inner:
            run += len(chunk)
            if run > self._limit:
                raise _refuse(self._server, self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedEvents(httpx2.AsyncByteStream):
    """An SSE stream passed on event by event; an event past ``limit`` is thrown away as it streams and
    an error answer takes its place (to the request the POST carried, else to the id the event shows),
    so the stream, and the session on it (the legacy SSE transport has only one), go on."""

    def __init__(self, inner: Any, server: str, limit: int, request: httpx2.Request) -> None:
        self._inner, self._server, self._limit, self._request = inner, server, limit, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = bytearray()  # the event being read, not passed on yet (at most ``limit`` bytes)
        drop: Dropped | None = None  # the event being thrown away
        carry = b""  # its last bytes: a blank line may straddle two chunks
        async for chunk in self._inner:
            data = chunk
            while data:
                if drop is None:
                    start = max(0, len(pending) - 3)
                    pending += data
                    data = b""
                    if (cut := _last_end(pending, start)) > 0:
                        yield bytes(pending[:cut])
                        del pending[:cut]
                    if len(pending) > self._limit:
                        drop = Dropped(bytes(pending[:HEAD]), len(pending))
                        carry = bytes(pending[-TAIL:])
                        pending.clear()
                    continue
                seen = carry + data
                if (end := _first_end(seen)) < 0:
                    drop.size += len(data)
                    carry, data = seen[-TAIL:], b""
                    continue
                drop.ended, drop.tail = True, seen[:end][-TAIL:]
                if (replaced := self._instead(drop)) is not None:
                    yield replaced
                drop, carry, data = None, b"", seen[end:]
        if pending:
            yield bytes(pending)

    def _instead(self, drop: Dropped) -> bytes | None:
        """The SSE event answering the dropped one's request with the error, if its id is known."""
        _note(self._server, self._limit)
        rid = _request_id(self._request)
        if rid is None:
            at = drop.head.find(b"data:")
            rid = Dropped(drop.head[at + 5:] if at >= 0 else drop.head, drop.size, True, drop.tail).id()
        if rid is None:
            return None
        error = {"code": types.INTERNAL_ERROR, "message": too_big(self._limit)}
        return b"event: message\ndata: " + json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode() + b"\n\n"

    async def aclose(self) -> None:
        await self._inner.aclose()


def _note(server: str, limit: int) -> None:
    log.warning("[%s] dropped an answer of more than %d bytes (hub.max_message_bytes)", server, limit)


def _refuse(server: str, limit: int) -> MessageTooBig:
    _note(server, limit)
    return MessageTooBig(too_big(limit))


def _last_end(data: bytearray, start: int) -> int:
    """Where the last complete SSE event in ``data`` ends (looking from ``start``), or -1."""
    return max((at + len(end) if (at := data.rfind(end, start)) >= 0 else -1) for end in _ENDS)


def _first_end(data: bytes) -> int:
    return min((at + len(end) for end in _ENDS if (at := data.find(end)) >= 0), default=-1)


def _request_id(request: httpx2.Request) -> Any:
    """The id of the JSON-RPC request a POST carried (its answer comes on that POST's stream), or None."""
    if request.method != "POST":
        return None
    try:
        sent = json.loads(request.content)
    except (ValueError, RecursionError, httpx2.RequestNotRead):
        return None
    rid = sent.get("id") if isinstance(sent, dict) else None
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


class Capped(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, server: str, limit: int) -> None:
        self._inner, self._server, self._limit = inner, server, limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        length = response.headers.get("content-length", "")
        declared = int(length) if length.isdigit() and not events else None
        response.stream = (_CappedEvents(response.stream, self._server, self._limit, request) if events  # type: ignore
                           else _CappedBody(response.stream, self._server, self._limit, declared))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def plain(msg: Any) -> Any:
    """``msg``, an error answer built by the SDK around ``MessageTooBig``'s sentence, with that sentence only."""
    if isinstance(msg, SessionMessage) and isinstance(msg.message, types.JSONRPCError) and \
            _MARK in (said := msg.message.error.message) and _START in said:
        error = types.ErrorData(code=types.INTERNAL_ERROR, message=said[said.index(_START):])
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=msg.message.id, error=error))
    return msg
