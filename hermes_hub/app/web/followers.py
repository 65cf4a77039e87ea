"""How many live streams (``/events?follow=1``, ``/status/stream``) one user holds open at once.

    followers = Followers()
    return followers.stream(user_id, cap, body, headers)  # a 429 past ``cap``, else the stream

Each stream holds a subscriber queue on the event bus and a connection for as long as its reader stays,
so one token could otherwise hold any number. The slot is taken when the request is answered (so a burst
of requests cannot all slip past the count) and given back when the response ends however it ends: the
reader went away, the hub stops, or the stream failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterable

from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

RETRY_AFTER = 10  # seconds: a page's stream ends within its heartbeat of being closed


class _Held(StreamingResponse):
    """A stream that gives its slot back when it ends, whichever way."""

    def __init__(self, content: AsyncIterable[str], release: object, headers: dict[str, str]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()  # type: ignore[operator]
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:  # its bus subscription ends now, not when the generator is collected
                await close()


class Followers:
    def __init__(self) -> None:
        self.open: Counter[str] = Counter()  # user id -> streams open now

    def stream(self, user_id: str, cap: int, body: AsyncIterable[str], headers: dict[str, str]) -> Response:
        if self.open[user_id] >= cap:
            return JSONResponse({"error": "too_many_requests", "error_description":
                                 f"user '{user_id}' already follows {self.open[user_id]} live streams (/events, "
                                 f"/status/stream), the most hub.max_followers ({cap}) allows; close one (a status "
                                 f"page tab, an /events?follow=1 reader) and try again, or ask the hub's admin to "
                                 f"raise hub.max_followers in hub.json"},
                                status_code=429, headers={"retry-after": str(RETRY_AFTER)})
        self.open[user_id] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.open[user_id] -= 1
                if self.open[user_id] <= 0:
                    del self.open[user_id]

        return _Held(body, release, headers)


__all__ = ["Followers"]
