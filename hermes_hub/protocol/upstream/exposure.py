"""How a served hub may be reached, decided once when ``hermes-hub serve`` starts and never changed
while it runs.

    exposure = Exposure.decide(config, bind="127.0.0.1", has_tokens=False)
    exposure.required        # False: loopback, no tokens: every caller is the local user
    exposure.names           # {"localhost"}: Host names accepted besides IP literals

Authentication is **required** when the hub listens on a non-loopback address, when any token
exists at start, when ``hub.trusted_proxies`` is set (a proxy brings other machines' requests),
when ``auth.required`` is true, or when ``auth.issuer`` names an identity provider whose tokens it
accepts. A hub that requires tokens and has none left (the last one revoked)
refuses everyone; it never falls back to the local user. Otherwise (loopback, no tokens) every
caller is the local user, which is only safe while nothing but this machine's own pages can talk
to it: ``HostCheck`` refuses a ``Host`` (and an ``Origin``, when sent) that is not a name of the
bound address, so a foreign page whose name was rebound to 127.0.0.x (DNS rebinding) gets 421.
An IP literal is always a name of its own: rebinding needs a name the attacker controls.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.infra.config import HubConfig

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and every address in 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hostname(authority: str) -> str:
    """The lower-case name in ``host[:port]``, or "" when there is none or it is malformed."""
    if not authority or "/" in authority or "@" in authority:
        return ""
    try:
        return urlsplit(f"//{authority}").hostname or ""
    except ValueError:  # e.g. an unclosed "[" of an IPv6 literal
        return ""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Exposure:
    bind: str
    required: bool
    reason: str  # why, in the words of the start-up log line
    names: frozenset[str] | None  # Host names accepted (besides IP literals); None: any name (tokens guard)
    trusted_proxies: tuple[str, ...] = ()
    has_tokens: bool = False  # at start

    @classmethod
    def decide(cls, config: HubConfig, bind: str, has_tokens: bool) -> Exposure:
        """The exposure of a hub serving ``config`` on ``bind``."""
        hub, auth = config.hub, config.auth
        loopback = is_loopback(bind)
        proxies = tuple(hub.trusted_proxies)
        if auth.required is not None:
            required, reason = auth.required, "auth.required is " + str(auth.required).lower()
        elif not loopback:
            required, reason = True, f"it listens on {bind}, not a loopback address"
        elif auth.issuer:
            required, reason = True, f"auth.issuer names an identity provider ({auth.issuer})"
        elif has_tokens:
            required, reason = True, "tokens exist"
        elif proxies:
            required, reason = True, "hub.trusted_proxies brings requests from other machines"
        else:
            required, reason = False, f"it listens on loopback ({bind}) and no token exists"
        extra = frozenset(h.lower() for h in hub.allowed_hosts)
        if loopback:
            names: frozenset[str] | None = LOOPBACK_NAMES | extra
        else:
            names = extra or None  # reached by names this hub cannot know; tokens guard it
        return cls(bind, required, reason, names, proxies, has_tokens or bool(auth.issuer))

    def refusal(self) -> str | None:
        """Why the hub must not start at all on this exposure, or None."""
        if not self.required and not is_loopback(self.bind):
            return (f"refusing to listen on {self.bind} without authentication: every caller would be the local "
                    f"user. Remove auth.required: false, or use --host 127.0.0.1.")
        if not self.has_tokens and not is_loopback(self.bind):
            return (f"refusing to listen on {self.bind}: no tokens are configured, so nobody could use the hub. "
                    f"Create one with `hermes-hub token create USER` (or set auth.tokens in hub.json), "
                    f"or use --host 127.0.0.1.")
        return None

    def host_allowed(self, name: str) -> bool:
        return self.names is None or name in self.names or _is_ip(name)

    def origin_allowed(self, origin: str) -> bool:
        scheme, _, rest = origin.partition("://")
        name = _hostname(rest)
        if scheme.lower() not in ("http", "https") or not name:
            return False  # "null" (a sandboxed frame, a file:// page) is nobody's name
        return self.host_allowed(name)

    def summary(self) -> str:
        if self.required:
            return f"authentication: required ({self.reason}); every request needs a bearer token"
        return (f"authentication: off ({self.reason}); every caller is the local user. A token created now "
                f"takes effect when the hub restarts")


class HostCheck:
    """421 for a ``Host`` that is not a name of this hub, 403 for a foreign ``Origin`` (every path)."""

    def __init__(self, app: ASGIApp, exposure: Exposure) -> None:
        self.app, self.exposure = app, exposure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.exposure.names is None:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = _hostname(raw_host)
        origin = headers.get(b"origin", b"").decode("latin-1")
        if not host or not self.exposure.host_allowed(host):
            await _refuse(send, 421, "misdirected_request",
                          f"Host {raw_host[:100]!r} is not a name of this hub; open it at its address "
                          f"({self.exposure.bind}), or add the name a reverse proxy uses to hub.allowed_hosts")
            return
        if origin and not self.exposure.origin_allowed(origin):
            await _refuse(send, 403, "forbidden",
                          f"requests from pages at {origin[:100]!r} are refused; add that name to "
                          f"hub.allowed_hosts if the page is yours")
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, error: str, description: str) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
