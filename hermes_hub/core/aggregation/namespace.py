"""Reversible public names for one server's tools, prompts and resource URIs.

Names:  ``calendar`` + ``_`` + ``query``            -> ``calendar_query``
URIs:   the prefix becomes the first authority/path segment, so the result stays a valid URI
        and templates keep working when a host expands them:
        ``notes://note/{id}``  -> ``notes://notes/note/{id}``
        ``file:///tmp/a.txt``  -> ``file://fs//tmp/a.txt``
        ``urn:isbn:123``       -> ``urn:books/isbn:123``
An empty prefix leaves names and URIs unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HOST_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what Claude Desktop accepts for tool names
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")


@dataclass(frozen=True)
class Namespace:
    prefix: str
    separator: str = "_"

    def name(self, original: str) -> str:
        return f"{self.prefix}{self.separator}{original}" if self.prefix else original

    def original(self, public: str) -> str | None:
        """The server's own name for ``public``, or None when it is not in this namespace."""
        if not self.prefix:
            return public
        head = self.prefix + self.separator
        return public[len(head) :] if public.startswith(head) and len(public) > len(head) else None

    def uri(self, original: str) -> str:
        if not self.prefix:
            return original
        m = _SCHEME_RE.match(original)
        if not m:
            return f"{self.prefix}/{original}"
        return f"{m.group(0)}{self.prefix}/{original[m.end():]}"

    def original_uri(self, public: str) -> str | None:
        """Reverse of ``uri``; None when ``public`` does not carry this namespace's prefix."""
        if not self.prefix:
            return public
        m = _SCHEME_RE.match(public)
        start = m.end() if m else 0
        head = self.prefix + "/"
        if not public.startswith(head, start):
            return None
        return public[:start] + public[start + len(head) :]


def name_problem(name: str) -> str | None:
    """Why a public name would be rejected by hosts like Claude Desktop, or None if it fits."""
    if HOST_NAME_RE.match(name):
        return None
    if len(name) > 64:
        return f"is {len(name)} characters long; hosts such as Claude Desktop accept at most 64"
    return "contains characters outside A-Z a-z 0-9 _ -, which hosts such as Claude Desktop reject"
