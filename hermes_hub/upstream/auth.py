"""Bearer-token authentication for the HTTP endpoint.

Whether callers need a token is decided once at start (``exposure.Exposure``). When they do, every
request to /mcp must carry ``Authorization: Bearer <token>``; a missing, unknown or over-long token
gets 401 with ``WWW-Authenticate``; after a few wrong tokens from one address in a minute, that
address gets 429 with ``Retry-After`` (``hermes_hub.throttle``, shared with the status page). A hub
that requires tokens and has none left refuses everyone, and logs how to create one. When tokens
are not required (loopback, none at start), a caller is the local user, or the owner of a valid
token it presents. The caller found is left in the ASGI scope's state for the handlers.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.identity import IDENTITY_KEY, MAX_TOKEN_CHARS, Authenticator, Identity
from hermes_hub.throttle import Throttle, Throttled

log = logging.getLogger("hermes_hub.auth")
NONE_LEFT_EVERY = 60.0  # seconds between log lines saying that no token is left


class BearerAuth:
    def __init__(self, app: ASGIApp, authenticator: Any, local: Identity, required: bool, protect: str = "/mcp",
                 throttle: Throttle | None = None) -> None:
        self.app, self.local, self.required, self.protect = app, local, required, protect
        self.throttle = throttle or Throttle()
        self._auth: Authenticator = authenticator
        self._said_none_left = -NONE_LEFT_EVERY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.protect):
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        identity: Identity | None = None if self.required else self.local
        if token:
            address = scope["client"][0] if scope.get("client") else "unknown"
            try:
                self.throttle.check(address)
            except Throttled as refused:
                await _throttled(send, refused)
                return
            identity = await self._auth.identify(token) if len(token) <= MAX_TOKEN_CHARS else None
            if identity is None:
                self.throttle.failed(address, scope["path"])
        if identity is None:
            why = ("missing bearer token" if not header else
                   "token too long" if len(token) > MAX_TOKEN_CHARS else "invalid or revoked token")
            await self._say_if_none_left()
            await _unauthorized(send, why)
            return
        scope.setdefault("state", {})[IDENTITY_KEY] = identity
        await self.app(scope, receive, send)

    async def _say_if_none_left(self) -> None:
        now = time.monotonic()
        if self.required and now - self._said_none_left >= NONE_LEFT_EVERY:
            self._said_none_left = now
            if not await self._auth.enabled():
                log.warning("refusing every HTTP caller: this hub requires tokens and none is left (all revoked?); "
                            "create one with `hermes-hub token create USER`")


async def _throttled(send: Send, refused: Throttled) -> None:
    body = json.dumps({"error": "too_many_requests", "error_description": refused.sentence}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(refused.retry_after).encode()),
    ]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send, why: str) -> None:
    body = json.dumps({
        "error": "unauthorized",
        "error_description": f"{why}: send 'Authorization: Bearer <token>'; create one with "
                             f"`hermes-hub token create USER`",
    }).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", f'Bearer realm="hermes-hub", error="invalid_token", error_description="{why}"'.encode()),
    ]})
    await send({"type": "http.response.body", "body": body})
