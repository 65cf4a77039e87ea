"""Every page of a downstream list: a server is READY only once all of them are in; and how long
the server said the list stays fresh (2026-07-28 ``ttlMs``/``cacheScope``), counted from the fetch."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import mcp.types as types
from mcp import MCPError

from hermes_hub.infra.errors import DownstreamError

LIST_METHODS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
MAX_PAGES = 1000  # a server that loops its cursors must not hang start-up


@dataclass(frozen=True)
class Freshness:
    """A server's cache hint for one of its lists: fresh until ``expires`` (``time.monotonic()``)."""

    expires: float
    scope: Literal["public", "private"]
    given_ms: int = 0  # the ttl the server gave

    def ttl_ms(self, now: float | None = None) -> int:
        """What is left of it, in milliseconds (0 once past)."""
        return max(0, int((self.expires - (time.monotonic() if now is None else now)) * 1000))


STALE = Freshness(0.0, "private")  # a list_changed arrived: the hub's copy is stale until re-listed


def freshness(pages: Iterable[Any], modern: bool, fetched: float) -> Freshness | None:
    """The hint of a list fetched at ``fetched`` in ``pages``: the smallest ttl of its pages and the
    narrowest scope. None where the server gives none (handshake era, or no page said)."""
    hinted = [p for p in pages if "ttl_ms" in p.model_fields_set]
    if not modern or not hinted:
        return None
    scope: Literal["public", "private"] = "public" if all(p.cache_scope == "public" for p in hinted) else "private"
    ttl = min(p.ttl_ms for p in hinted)
    return Freshness(fetched + ttl / 1000, scope, ttl)


async def every_page(fetch: Callable[..., Awaitable[Any]], attr: str, pages: list[Any] | None = None) -> list[Any]:
    """``attr`` of every page ``fetch(cursor=...)`` returns; nothing if the method is not there.
    Each page is appended to ``pages`` when given (for its cache hint)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        try:
            page = await fetch(cursor=cursor)
        except MCPError as e:
            if e.code == types.METHOD_NOT_FOUND:  # e.g. resources without templates: nothing to list
                return items
            raise
        items += getattr(page, attr)
        if pages is not None:
            pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            return items
    raise DownstreamError("?", f"{attr} listing did not end after {MAX_PAGES} pages")


# What each kind of change makes stale (both eras' notifications, and 2026 listen events by name).
STALE_ON = {"ToolListChangedNotification": ("tools/list",), "ToolsListChanged": ("tools/list",),
            "PromptListChangedNotification": ("prompts/list",), "PromptsListChanged": ("prompts/list",),
            "ResourceListChangedNotification": ("resources/list", "resources/templates/list"),
            "ResourcesListChanged": ("resources/list", "resources/templates/list")}


def next_refresh(hints: dict[str, Freshness | None], floor_ms: int = 1000) -> float:
    """Seconds until the first list a server gave a ttl of at least ``floor_ms`` goes stale, when the hub
    lists it again to renew the hint (a shorter ttl is passed on but not renewed: no re-listing in a
    loop); ``inf`` when there is none."""
    live = [f.expires for f in hints.values() if f is not None and f.given_ms >= floor_ms]
    return max(0.0, min(live) - time.monotonic()) if live else float("inf")
