"""HTTP statuses that say "not now" (429, 502, 503, 504), made visible to the hub.

The SDK's streamable HTTP client answers any 4xx/5xx without a JSON-RPC body with one
INTERNAL_ERROR, "Server returned an error response", and drops the status and ``Retry-After``
(``mcp/client/streamable_http.py``, ``_handle_post_request``). ``StatusAware`` wraps the httpx2
transport of the hub's own client: such an answer to a request becomes a JSON-RPC error for that
request whose message says what happened and what to do, and whose data carries the status and
the delay; the SDK passes that on as ``MCPError.data``, and the retry policy reads it.
"""

from __future__ import annotations

import datetime
import email.utils
import json

import httpx2
import mcp.types as types

# Statuses a server (or a proxy before it) answers when it cannot take a request now. The SDK
# reports them all as one "Server returned an error response" (-32603) and drops the status.
BUSY_STATUSES = {
    429: "is rate-limiting the hub (429 Too Many Requests): slow down, or raise its rate limit",
    502: "is behind a proxy that could not reach it (502 Bad Gateway): check that the server behind it is up",
    503: "is unavailable (503 Service Unavailable): overloaded or down for maintenance; try again later",
    504: "is behind a proxy that gave up waiting for it (504 Gateway Timeout): the request may still have run",
}
HTTP_STATUS_KEY, RETRY_AFTER_KEY = "hermes-hub/httpStatus", "hermes-hub/retryAfter"  # in the error's data
MAX_DETAIL = 300  # characters of the server's own error text quoted


class StatusAware(httpx2.AsyncBaseTransport):
    """Turns a 429/502/503/504 answer to a JSON-RPC request into a JSON-RPC error that names the
    status and carries it (and ``Retry-After``) in its data, which the SDK passes on intact."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if response.status_code not in BUSY_STATUSES or request.method != "POST":
            return response
        try:
            sent = json.loads(request.content)
        except (ValueError, RecursionError):
            return response
        if not isinstance(sent, dict) or "id" not in sent or "method" not in sent:
            return response  # a notification: nothing waits for its answer
        try:
            body = await response.aread()
        except (httpx2.HTTPError, httpx2.StreamError):  # e.g. a body past hub.max_message_bytes (``http_limit``)
            body = b""
        finally:
            await response.aclose()
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        text = BUSY_STATUSES[response.status_code] + _their_words(body)
        if retry_after is not None:
            text += f"; it asked to retry after {retry_after:g}s"
        error = {"code": types.INTERNAL_ERROR, "message": text,
                 "data": {HTTP_STATUS_KEY: response.status_code, RETRY_AFTER_KEY: retry_after}}
        return httpx2.Response(response.status_code, headers={"content-type": "application/json"}, request=request,
                               content=json.dumps({"jsonrpc": "2.0", "id": sent["id"], "error": error}).encode())

    async def aclose(self) -> None:
        await self._inner.aclose()


def _their_words(body: bytes) -> str:
    """The server's own explanation, if its body has one (a JSON-RPC error's message, or text)."""
    try:
        value = json.loads(body)
        said = value["error"]["message"] if isinstance(value, dict) and isinstance(value.get("error"), dict) else None
    except (ValueError, RecursionError, KeyError, TypeError):
        said = body.decode("utf-8", "replace").strip() if body and b"<" not in body[:1] else None
    if not said or not isinstance(said, str):
        return ""
    said = " ".join(said.split())
    return f" (it said: {said[:MAX_DETAIL]}{'...' if len(said) > MAX_DETAIL else ''})"


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
