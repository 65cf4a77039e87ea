"""Every page of a downstream list: a server is READY only once all of them are in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from mcp import MCPError

from hermes_hub.errors import DownstreamError

MAX_PAGES = 1000  # a server that loops its cursors must not hang start-up


async def every_page(fetch: Callable[..., Awaitable[Any]], attr: str) -> list[Any]:
    """``attr`` of every page ``fetch(cursor=...)`` returns; nothing if the method is not there."""
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
        cursor = page.next_cursor
        if not cursor:
            return items
    raise DownstreamError("?", f"{attr} listing did not end after {MAX_PAGES} pages")
