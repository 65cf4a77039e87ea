"""A URL in one spelling: what ``docs.roots`` prefixes are compared with, and what the hub then fetches.

    Address.parse("HTTP://Docs.Example:80/public/%2e%2E/private/x.md")  ->  http://docs.example/private/x.md
    Address.parse("http://docs.example/public/a.md").under(Address.parse("http://docs.example/public/"))  -> True

Servers read a path differently (one decodes ``%2e`` to a dot and then resolves ``..``, one merges ``//``,
one cuts ``;params`` off a segment), so a prefix check on the text as given can be walked around. The hub
compares and sends one spelling: escapes of unreserved characters (``%2e``, ``%7E``) decoded and the rest
upper-cased, dot segments resolved, empty segments merged, scheme and host lower-cased, a trailing dot and
a default port dropped, the fragment (never sent) dropped. What stays ambiguous after that is refused:
user info, an encoded or literal backslash, an encoded slash, a double-encoded dot or slash, a dot segment
with ``;parameters``, a control character, a host that is not plain ASCII.

A root matches by whole path segments: ``/public/`` and ``/public`` both admit ``/public`` and
``/public/a.md``, neither admits ``/public-evil/`` or ``/publicity``.
"""

from __future__ import annotations

import ipaddress
import re
import string
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from hermes_hub.infra.errors import InvalidInput

MAX_URL_CHARS = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}
UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
SEGMENT_SAFE = "!$&'()*+,;=:@-._~"  # kept as they are in a segment; anything else is percent-encoded
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_AMBIGUOUS = re.compile(r"%(?:25)*(?:2F|5C)|%(?:25)+2E", re.IGNORECASE)  # an encoded slash, backslash; a dot twice


@dataclass(frozen=True)
class Address:
    scheme: str
    host: str  # lower case; an IPv6 address in brackets
    port: int | None  # None: the scheme's default
    path: str  # starts with "/", no dot or empty segments
    query: str

    def __str__(self) -> str:
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{self.host}{port}{self.path}" + (f"?{self.query}" if self.query else "")

    @classmethod
    def parse(cls, url: str) -> Address:
        """``url`` in its one spelling, or InvalidInput saying why it cannot be read only one way."""
        if len(url) > MAX_URL_CHARS:
            raise InvalidInput(f"the URL is {len(url):,} characters; at most {MAX_URL_CHARS:,}")
        if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
            raise InvalidInput(f"{url!r} holds a space or control character; percent-encode it (%20)")
        before_query = url.split("?", 1)[0].split("#", 1)[0]
        if "\\" in before_query:
            raise InvalidInput(f"{url} holds a backslash, which some servers read as '/'; write the path with '/' only")
        parts = urlsplit(url)
        if parts.scheme not in DEFAULT_PORTS:
            raise InvalidInput(f"{url} is not an http:// or https:// URL")
        if "@" in parts.netloc:
            raise InvalidInput(f"{url} holds user info (user@ or user:password@); give the address without it")
        try:
            port = parts.port
        except ValueError:
            raise InvalidInput(f"{url} has an invalid port") from None
        return cls(parts.scheme, _host(parts.hostname or "", url), None if port == DEFAULT_PORTS[parts.scheme]
                   else port, _path(parts.path, url), parts.query)

    def under(self, root: Address) -> bool:
        """This address lies under ``root``: the same scheme, host and port, and ``root``'s path segments
        first (a root of ``/public`` or ``/public/`` admits ``/public/a.md``, not ``/public-evil/``)."""
        if (self.scheme, self.host, self.port) != (root.scheme, root.host, root.port):
            return False
        base = root.path.rstrip("/")
        return self.path == base or self.path.startswith(base + "/")


def _host(host: str, url: str) -> str:
    host = host.lower().removesuffix(".")
    if "%" in host:
        raise InvalidInput(f"{url}: the host holds a percent sign; write it plainly")
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            raise InvalidInput(f"{url} has an invalid IPv6 address") from None
    if not _HOST.fullmatch(host):
        raise InvalidInput(f"{url}: the host must be plain ASCII letters, digits, '-' and '.' (write a "
                           f"non-ASCII name in its xn-- form)")
    return host


def _segment(raw: str) -> str:
    """One path segment in one spelling: unreserved escapes decoded, other escapes upper-cased, the rest
    of what is not allowed literally (a stray ``%``, non-ASCII) percent-encoded."""
    raw = _STRAY_PERCENT.sub("%25", raw)
    out = []
    for i, piece in enumerate(_ESCAPE.split(raw)):
        if i % 2:  # the two hex digits of an escape
            char = chr(int(piece, 16))
            out.append(char if char in UNRESERVED else f"%{piece.upper()}")
        else:
            out.append(quote(piece, safe=SEGMENT_SAFE))
    return "".join(out)


def _path(raw: str, url: str) -> str:
    kept: list[str] = []
    segments = [_segment(s) for s in (raw.split("/")[1:] if raw.startswith("/") else ([raw] if raw else []))]
    trailing = not segments or segments[-1] in ("", ".", "..")
    for segment in segments:
        if _AMBIGUOUS.search(segment):
            raise InvalidInput(f"{url} holds an encoded slash, backslash or double-encoded dot (%2F, %5C, %252E), "
                               f"which servers read differently; write the path plainly")
        if segment.split(";", 1)[0] in (".", "..") and ";" in segment:
            raise InvalidInput(f"{url} holds a dot segment with parameters ({segment}), which some servers "
                               f"read as '..'; write the path plainly")
        if segment == "..":
            if kept:
                kept.pop()
        elif segment not in ("", "."):
            kept.append(segment)
    if not kept:
        return "/"
    return "/" + "/".join(kept) + ("/" if trailing else "")


__all__ = ["MAX_URL_CHARS", "Address"]
