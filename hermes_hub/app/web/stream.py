"""``GET /status/stream``: the status page's live view as a subscriber of the hub's event bus.

The page (``static/status.js``) keeps this server-sent-event stream open and fetches its changing
part (``/status/live``) as soon as something it shows has changed: a call or agent run of the viewer
(an admin: anyone's), or a server's state (for every viewer). A message says only that something
changed (``{"seq": N}``): what the viewer may see is decided by ``/status/live`` as before. While the stream is open the page polls only every
``FALLBACK_SECONDS`` (queue depths and counts are not events); when it is not, as before, every
``routes.POLL_SECONDS``. Like the bus, the stream never slows a call: its queue is bounded and a
burst of events is one refresh.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes_hub.infra.events import Event, ServerStateChanged
from hermes_hub.app.web.access import Access
from hermes_hub.app.web.followers import Followers

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

HEARTBEAT = 15.0  # seconds between comments on a quiet stream, so a page that went away is noticed
FALLBACK_SECONDS = 15  # the page's poll while this stream is open
QUEUE = 64  # events a page's stream may fall behind; one tick covers them all anyway


def stream_routes(hub: Hub, access: Access, limited: Callable[..., Callable[[Request], Awaitable[Response]]],
                  followers: Followers) -> list[Route]:
    async def stream(request: Request) -> Response:
        viewer = await access.viewer(request)
        if viewer is None:
            return JSONResponse({"error": "log in again"}, status_code=401)
        me, admin = viewer.identity.user_id, viewer.admin

        def shown(event: Event) -> bool:
            if admin or event.user_id == me:
                return True
            return isinstance(event, ServerStateChanged)  # no one's: the page shows each viewer theirs

        return followers.stream(me, hub.config.hub.max_followers, _ticks(hub, shown, me),
                                {"cache-control": "no-store", "x-accel-buffering": "no"})

    return [Route("/status/stream", limited(stream, html=False))]


async def _ticks(hub: Hub, shown: Callable[[Event], bool], me: str) -> AsyncIterator[str]:
    with hub.events.subscribe(f"status:{me}", accept=shown, size=QUEUE) as events:
        yield f"retry: 3000\n: following (poll every {FALLBACK_SECONDS}s meanwhile)\n\n"
        async for event in events.beats(HEARTBEAT):
            yield ": quiet\n\n" if event is None else f"data: {json.dumps({'seq': event.seq})}\n\n"
