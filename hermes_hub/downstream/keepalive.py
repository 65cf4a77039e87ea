"""Connections to an HTTP server kept for the next call, where the SDK would drop one per call.

The SDK's streamable HTTP client closes a POST's SSE response as soon as the JSON-RPC response
arrived (``mcp/client/streamable_http.py``, ``_handle_sse_response``), a few bytes before the
server ends the stream; a response closed before its end cannot go back to the pool, so every tool
call to an HTTP server opened a new TCP connection (measured: 920 connections for 960 calls with
32 in flight, issue 22). ``KeepAlive`` wraps the transport of the hub's own client: closing such a
response first reads what is left of it, within ``DRAIN_BYTES`` and ``DRAIN_SECONDS`` (a server
that keeps the stream open just loses the connection, as before).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx2

DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 0.5


class _Drained(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner
        self._chunks = inner.__aiter__()
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._ended = True
                return
            yield chunk

    async def aclose(self) -> None:
        if not self._ended:
            left = DRAIN_BYTES
            with anyio.move_on_after(DRAIN_SECONDS):
                try:
                    while left > 0:
                        left -= len(await self._chunks.__anext__())
                except StopAsyncIteration:
                    self._ended = True
                except (httpx2.HTTPError, OSError, RuntimeError):  # gone or broken: closing is all that is left
                    pass
        await self._inner.aclose()


class KeepAlive(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if request.method == "POST" and response.headers.get("content-type", "").startswith("text/event-stream"):
            response.stream = _Drained(response.stream)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
