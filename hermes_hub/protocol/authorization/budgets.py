"""What anonymous callers of the OAuth endpoints may spend: requests a minute and bytes a request.

    app = Budget(app, "client registrations", per_address=20, hub_wide=60)
    app = BodyCap(app, 32 * 1024, "client metadata", "send at most 10 redirect URIs and short names")

A ``Budget`` counts each address's requests and the whole hub's in the last minute; past either, the
request gets 429 with ``Retry-After`` and a sentence saying which budget ran out, so neither one
address nor many (127.0.0.2, 127.0.0.3, …) can fill the store. Addresses are forgotten oldest first
past ``addresses``. A ``BodyCap`` answers 413 to a body larger than its limit, before anything reads it.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

WINDOW = 60.0


def _spend(times: deque[float], now: float, limit: int) -> int | None:
    """Record one request at ``now``; None, or the seconds until the window has room again."""
    while times and times[0] < now - WINDOW:
        times.popleft()
    if len(times) >= limit:
        return max(1, int(times[0] + WINDOW + 1 - now))
    times.append(now)
    return None


class Budget:
    def __init__(self, app: ASGIApp, what: str, *, per_address: int, hub_wide: int, addresses: int = 4096) -> None:
        self.app, self.what = app, what
        self.per_address, self.hub_wide, self.addresses = per_address, hub_wide, addresses
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._hub: deque[float] = deque()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "POST"):
            address, now = (scope.get("client") or ("unknown",))[0], time.monotonic()
            times = self._seen.pop(address, deque())
            self._seen[address] = times
            if len(self._seen) > self.addresses:
                self._seen.popitem(last=False)
            retry = _spend(times, now, self.per_address)
            why = f"too many {self.what} from your address (at most {self.per_address} a minute)"
            if retry is None:
                retry = _spend(self._hub, now, self.hub_wide)
                why = f"too many {self.what} on this hub from all addresses (at most {self.hub_wide} a minute)"
                if retry is not None:
                    times.pop()  # refused: not counted against the address
            if retry is not None:
                await JSONResponse({"error": "too_many_requests", "error_description": f"{why}; try again in {retry} s"},
                                   429, {"retry-after": str(retry), "cache-control": "no-store"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyCap:
    def __init__(self, app: ASGIApp, limit: int, what: str, hint: str, error: str = "invalid_client_metadata") -> None:
        self.app, self.limit, self.what, self.hint, self.error = app, limit, what, hint, error

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await JSONResponse({"error": self.error, "error_description":
                            f"the {self.what} sent is larger than {self.limit} bytes, the most this hub accepts; "
                            f"{self.hint}"}, 413)(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)
