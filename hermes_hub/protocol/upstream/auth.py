"""Bearer-token authentication for the HTTP endpoint.

Whether callers need a token is decided once at start (``exposure.Exposure``). When they do, every
request to /mcp must carry ``Authorization: Bearer <token>``; a missing, unknown or over-long token
gets 401 with ``WWW-Authenticate``; after a few wrong tokens from one address in a minute, that
address gets 429 with ``Retry-After`` (``hermes_hub.infra.throttle``, shared with the status page). A hub
that requires tokens and has none left refuses everyone, and logs how to create one. When tokens
are not required (loopback, none at start), a caller is the local user, or the owner of a valid
token it presents. The caller found is left in the ASGI scope's state for the handlers.

Besides hub tokens, a caller may present an OAuth access token this hub issued for the endpoint it
calls, or an external identity provider's JWT (``hermes_hub.protocol.authorization.Verifier`` decides). Every
401 of a hub that requires tokens names the endpoint's protected-resource metadata (``WWW-Authenticate:
Bearer resource_metadata=``, RFC 9728), where a host that speaks MCP authorization learns how to sign in; an
open hub's 401 (a wrong token) names none, since it serves no OAuth.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.protocol.authorization.routes import resource_metadata_url
from hermes_hub.protocol.authorization.verifier import Verdict
from hermes_hub.services.identity import IDENTITY_KEY, Identity
from hermes_hub.infra.throttle import Throttle, Throttled

log = logging.getLogger("hermes_hub.auth")
NONE_LEFT_EVERY = 60.0  # seconds between log lines saying that no token is left
CREDENTIAL_KEY = "hermes_credential"  # what a session is bound to when not the token (an OAuth grant), in scope state


class BearerAuth:
    def __init__(self, app: ASGIApp, authenticator: Any, local: Identity, required: bool, protect: str = "/mcp",
                 throttle: Throttle | None = None, public_url: str | None = None) -> None:
        self.app, self.local, self.required, self.protect = app, local, required, protect
        self.throttle = throttle or Throttle()
        self.public_url = public_url
        self._auth: Any = authenticator  # enabled(), verify(token, path) -> Verdict, max_chars
        self._said_none_left = -NONE_LEFT_EVERY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.protect):
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        path = scope["path"].rstrip("/") or "/"
        verdict = Verdict(None if self.required else self.local, "missing bearer token")
        if token:
            address = scope["client"][0] if scope.get("client") else "unknown"
            try:
                self.throttle.check(address)
            except Throttled as refused:
                await _throttled(send, refused)
                return
            verdict = (await self._auth.verify(token, path) if len(token) <= self._auth.max_chars
                       else Verdict(None, "token too long"))
            if verdict.identity is None:
                self.throttle.failed(address, scope["path"])
        elif header and self.required:
            verdict = Verdict(None, "invalid or revoked token")
        if verdict.identity is None:
            await self._say_if_none_left()
            # an open hub serves no OAuth metadata (``oauth_off_routes``): its 401 names none
            metadata = resource_metadata_url(scope, self.public_url, path) if self.required else None
            await _unauthorized(send, verdict.why, metadata)
            return
        state = scope.setdefault("state", {})
        state[IDENTITY_KEY] = verdict.identity
        if verdict.credential:
            state[CREDENTIAL_KEY] = verdict.credential
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


async def _unauthorized(send: Send, why: str, metadata: str | None) -> None:
    oauth = f", or sign in with OAuth (see {metadata})" if metadata else ""
    body = json.dumps({
        "error": "unauthorized",
        "error_description": f"{why}: send 'Authorization: Bearer <token>'; create one with "
                             f"`hermes-hub token create USER`{oauth}",
    }).encode()
    why = why.replace('"', "'")
    pointer = f'resource_metadata="{metadata}", ' if metadata else ""
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", (f'Bearer realm="hermes-hub", {pointer}error="invalid_token", '
                              f'error_description="{why}"').encode("latin-1", "replace")),
    ]})
    await send({"type": "http.response.body", "body": body})
