"""An HTTP server's answers capped at ``hub.max_message_bytes`` as they stream in.

    http = httpx2.AsyncClient(transport=Capped(httpx2.AsyncHTTPTransport(), "github", limit))  # ``transports``
    msg = plain(msg)  # the SDK's wording around the error, taken off (``transports._EndWatch``)

The SDK's streamable HTTP client reads a JSON answer whole (``response.aread()``, no limit: issue 30
saw 200 MB answers read whole before the catalog cut them) and an SSE event up to its own 1 MiB. The
``Capped`` transport wraps each response's byte stream: a JSON body (or any other) past ``limit``
bytes, or one SSE event (the bytes between two blank lines) past it, raises ``MessageTooBig`` at
that byte, before the rest is read; a body whose Content-Length says it is too big, at its first
read. The SDK answers the call that POST carried with an error of its own wording around ours
(``Failed to parse JSON response: …``, ``SSE stream failed: …``); ``plain`` keeps ours only. The
connection it came on is closed, not drained; the session goes on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp.types as types
from mcp.shared.message import SessionMessage

from hermes_hub.downstream.framing import too_big

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


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, server: str, limit: int, events: bool, declared: int | None) -> None:
        self._inner, self._server, self._limit, self._events, self._declared = inner, server, limit, events, declared

    def _refuse(self) -> MessageTooBig:
        log.warning("[%s] dropped an answer of more than %d bytes (hub.max_message_bytes)", self._server, self._limit)
        return MessageTooBig(too_big(self._limit))

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._declared is not None and self._declared > self._limit:
            raise self._refuse()
        run = 0  # bytes of the body, or of the SSE event being read
        carry = b""  # the last bytes of the previous chunk: a blank line may straddle two
        async for chunk in self._inner:
            if self._events:
                seen = carry + chunk
                cut = max((seen.rfind(end) + len(end) if end in seen else -1) for end in _ENDS)
                run = run + len(chunk) if cut < 0 else len(seen) - cut
                carry = seen[-3:]
            else:
                run += len(chunk)
            if run > self._limit:
                raise self._refuse()
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class Capped(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, server: str, limit: int) -> None:
        self._inner, self._server, self._limit = inner, server, limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        length = response.headers.get("content-length", "")
        declared = int(length) if length.isdigit() and not events else None
        response.stream = _CappedStream(response.stream, self._server, self._limit, events, declared)  # type: ignore
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
