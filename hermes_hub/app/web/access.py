"""Who is looking at the status page, and whether they may act.

When the hub does not require tokens (loopback, none at start: ``upstream.exposure``), the viewer is
the local user (an admin) if the connection comes from a loopback address; no header decides that,
and a foreign Host was refused before (``HostCheck``). When it requires them, a browser logs in once: the hub checks the token and opens a login session (``logins``) whose
random id goes into an HttpOnly, SameSite=Strict cookie; the token itself never leaves the login form.
A script sends ``Authorization: Bearer``. Until then no data leaves the hub, and wrong tokens are
limited per client address (``throttle``). Actions are POSTs that also carry a CSRF token (an HMAC
keyed by the viewer's secret: the session id, which every replica knows the same), so another site
can neither read the page nor make a logged-in browser restart a server.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request

from hermes_hub.infra.call import Identity
from hermes_hub.infra.throttle import Throttle
from hermes_hub.protocol.upstream.exposure import Exposure, is_loopback
from hermes_hub.app.web.logins import Logins

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

COOKIE = "hermes_status"


@dataclass(frozen=True)
class Viewer:
    identity: Identity
    credential: str  # the viewer's secret the CSRF token is keyed by: session id, bearer token, or this process's
    by_header: bool = False  # a script's bearer header: browsers never add one by themselves

    @property
    def admin(self) -> bool:
        return self.identity.is_admin


def client_address(request: Request) -> str:
    """The caller's address (uvicorn puts X-Forwarded-For there only for ``hub.trusted_proxies``)."""
    return request.client.host if request.client else "unknown"


class Access:
    def __init__(self, hub: Hub, exposure: Exposure, throttle: Throttle) -> None:
        self.hub, self.exposure = hub, exposure
        self.logins = Logins(hub)
        self.throttle = throttle
        self._local = secrets.token_urlsafe(32)  # the local user's CSRF key lasts as long as this process

    @property
    def tokens_required(self) -> bool:
        return self.exposure.required

    def check_throttle(self, request: Request) -> None:
        """Raise ``Throttled`` while this address may not try another token."""
        self.throttle.check(client_address(request))

    async def viewer(self, request: Request) -> Viewer | None:
        """The viewer of ``request``, or None: log in first (or, without tokens, not from this address)."""
        if not self.tokens_required:
            # The peer of the connection itself, never a header (a proxy on this machine is not trusted here).
            return Viewer(self.hub.local, self._local) if is_loopback(client_address(request)) else None
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            self.check_throttle(request)
            found = await self.hub.authenticator.identify(token.strip())
            if found is None:
                self._failed(request)
                return None
            return Viewer(found, token.strip(), by_header=True)
        session_id = request.cookies.get(COOKIE, "")
        found = await self.logins.identify(session_id) if session_id else None
        return Viewer(found, session_id) if found else None

    async def log_in(self, request: Request, token: str) -> str | None:
        """A new session id for the owner of ``token``, or None for a wrong one (counted against the address)."""
        self.check_throttle(request)
        opened = await self.logins.open(token) if token else None
        if opened is None:
            self._failed(request)
            return None
        return opened[0]

    def _failed(self, request: Request) -> None:
        self.throttle.failed(client_address(request), "the status page")

    def csrf(self, viewer: Viewer) -> str:
        return hmac.new(viewer.credential.encode(), b"hermes-hub status csrf", hashlib.sha256).hexdigest()

    async def may_act(self, request: Request, viewer: Viewer) -> bool:
        """A POST from this page: same origin, and the form's CSRF token is this viewer's."""
        if viewer.by_header:
            return True
        if not same_origin(request):
            return False
        sent = request.headers.get("x-csrf-token") or str((await request.form()).get("csrf", ""))
        return hmac.compare_digest(sent, self.csrf(viewer))


def same_origin(request: Request) -> bool:
    """False when a browser says the request comes from a page on another site (Origin, else Referer).

    A request with neither header comes from a script, not a page: it has nothing to forge.
    """
    host = request.headers.get("host", "")
    origin, referer = request.headers.get("origin"), request.headers.get("referer")
    try:
        if origin is not None:
            return origin != "null" and urlsplit(origin).netloc == host
        return referer is None or urlsplit(referer).netloc == host
    except ValueError:  # a malformed URL is no page of ours
        return False
