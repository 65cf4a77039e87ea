"""Cache hints (2026-07-28 ``ttlMs``/``cacheScope``, SEP-2549) of the lists the hub merges.

    hint = merged(parts, "tools/list", vouch_ms=60_000, shared=False)   # Hint(ttl_ms=..., scope="private")

A merged list is as fresh as its least fresh part and as shareable as its least shareable one: the
smallest ttl, and ``private`` if any part is. A part is a source whose items the list may hold. A
downstream server's own hint passes through, counted down from when the hub fetched the list, and 0
from the moment a list_changed made it stale (``downstream/listing.py``). A part without a hint of its
own (the hub's own tools, a handshake-era server) gets ``vouch_ms``: the hub's copy of it changes only
when the hub says so with list_changed. A list whose items depend on the caller's role is never
``public`` (``shared=False``), whatever its parts say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from hermes_hub.infra.call import Identity

LIST_KINDS = {"tools/list": "tools", "resources/list": "resources", "resources/templates/list": "templates",
              "prompts/list": "prompts"}
# No role is named like this, so what such a caller may see is what every caller may see.
NOBODY = Identity("", "\x00nobody")


@dataclass(frozen=True)
class Hint:
    ttl_ms: int
    scope: Literal["public", "private"]

    def narrowed(self, other: Hint) -> Hint:
        return Hint(min(self.ttl_ms, other.ttl_ms), "public" if self.scope == other.scope == "public" else "private")


def part_hint(source: Any, method: str, vouch_ms: int) -> Hint:
    """One source's hint for its part of ``method``'s list."""
    own = getattr(source, "freshness", {}).get(method)  # a downstream Connection's; the hub's own have none
    return Hint(vouch_ms, "public") if own is None else Hint(own.ttl_ms(), own.scope)


def merged(parts: Iterable[Any], method: str, *, vouch_ms: int, shared: bool) -> Hint:
    """The hint of a list made of ``parts`` (mounts); one with no parts is the hub's own (``vouch_ms``)."""
    hint = Hint(vouch_ms, "public")
    for mount in parts:
        hint = hint.narrowed(part_hint(mount.source, method, vouch_ms))
    return hint if shared else Hint(hint.ttl_ms, "private")


def same_for_everyone(entries: Iterable[Any], kind: str) -> bool:
    """Whether every caller sees all of ``entries`` (catalog entries of ``kind``): no role limits them."""
    if kind == "tools":
        return all(e.mount.serves(NOBODY) and e.mount.offers(e.original, NOBODY) for e in entries)
    return all(e.mount.serves(NOBODY) for e in entries)
