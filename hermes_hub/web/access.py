"""Who is looking at the status page, and whether they may act.

Without tokens the hub listens on loopback only and the viewer is the local user (an admin). With
tokens, a browser logs in once (the token goes into an HttpOnly, SameSite=Strict cookie) and a script
sends ``Authorization: Bearer``; until then no data leaves the hub. Actions are POSTs that also carry
a CSRF token (a hash of the viewer's credential under a secret of this process), so another site can
neither read the page nor make a logged-in browser restart a server.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request

from hermes_hub.call import Identity

if TYPE_CHECKING:
    from hermes_hub.hub import Hub

COOKIE = "hermes_status"
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class Viewer:
    identity: Identity
    credential: str  # the token, or "local": what the CSRF token is bound to
    by_header: bool = False  # a script's bearer header: browsers never add one by themselves

    @property
    def admin(self) -> bool:
        return self.identity.is_admin


class Access:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._secret = secrets.token_bytes(32)  # CSRF tokens last as long as this process

    async def tokens_required(self) -> bool:
        return await self.hub.authenticator.enabled()

    async def viewer(self, request: Request) -> Viewer | None:
        """The viewer of ``request``, or None: log in first (or, without tokens, not from this address)."""
        if not await self.tokens_required():
            # Loopback only; a page on another site whose name resolves to 127.0.0.1 (DNS rebinding) is refused.
            host = urlsplit(f"//{request.headers.get('host', '')}").hostname or ""
            return Viewer(self.hub.local, "local") if host in LOOPBACK_NAMES else None
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            found = await self.hub.authenticator.identify(token.strip())
            return Viewer(found, token.strip(), by_header=True) if found else None
        token = request.cookies.get(COOKIE, "")
        found = await self.hub.authenticator.identify(token) if token else None
        return Viewer(found, token) if found else None

    def csrf(self, viewer: Viewer) -> str:
        return hmac.new(self._secret, viewer.credential.encode(), hashlib.sha256).hexdigest()

    async def may_act(self, request: Request, viewer: Viewer) -> bool:
        """A POST from this page: same origin, and the form's CSRF token is this viewer's."""
        if viewer.by_header:
            return True
        origin = request.headers.get("origin")
        if origin and urlsplit(origin).netloc != request.headers.get("host"):
            return False
        sent = request.headers.get("x-csrf-token") or str((await request.form()).get("csrf", ""))
        return hmac.compare_digest(sent, self.csrf(viewer))
