"""Bearer-token authentication for the HTTP endpoint.

Once any token exists (in hub.json ``auth.tokens`` or created with ``hermes-hub token create``),
every request to /mcp must carry ``Authorization: Bearer <token>``; a missing or unknown token gets
401 with ``WWW-Authenticate``; after a few wrong tokens from one address in a minute, that address gets
429 with ``Retry-After`` (``hermes_hub.throttle``, shared with the status page). With no tokens at all, every caller is the local user (and the hub
listens on loopback only). The caller found is left in the ASGI scope's state for the handlers.
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.identity import IDENTITY_KEY, Authenticator, Identity
from hermes_hub.throttle import Throttle, Throttled

RECHECK_SECONDS = 5.0  # how soon a token created by another process switches authentication on


class BearerAuth:
    def __init__(self, app: ASGIApp, authenticator: Any, local: Identity, protect: str = "/mcp",
                 throttle: Throttle | None = None) -> None:
        self.app, self.local, self.protect = app, local, protect
        self.throttle = throttle or Throttle()
        self._auth: Authenticator = authenticator
        self._enabled: bool | None = None
        self._checked = 0.0

    async def _auth_enabled(self) -> bool:
        now = time.monotonic()
        if self._enabled is None or (not self._enabled and now - self._checked > RECHECK_SECONDS):
            self._enabled, self._checked = await self._auth.enabled(), now
        return self._enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.protect):
            await self.app(scope, receive, send)
            return
        identity: Identity | None = self.local
        if await self._auth_enabled():
            identity = None
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            scheme, _, token = header.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                address = scope["client"][0] if scope.get("client") else "unknown"
                try:
                    self.throttle.check(address)
                except Throttled as refused:
                    await _throttled(send, refused)
                    return
                identity = await self._auth.identify(token.strip())
                if identity is None:
                    self.throttle.failed(address, scope["path"])
            if identity is None:
                why = "missing bearer token" if not header else "invalid or revoked token"
                await _unauthorized(send, why)
                return
        scope.setdefault("state", {})[IDENTITY_KEY] = identity
        await self.app(scope, receive, send)


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
