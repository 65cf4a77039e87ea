"""Server middleware: the hub's own cache hints on every list it serves a 2026-07-28 host.

The SDK puts ``ttlMs: 0, cacheScope: "private"`` on every 2026-07-28 result a handler leaves
unset; this replaces them on ``tools/list``, ``resources/list``, ``resources/templates/list`` and
``prompts/list`` with the surface's hint (``aggregation/hints.py``), computed per request, so a
hint counts down and drops to 0 the moment a server's list_changed makes it stale, including
for a listing served from ``ListingMemo`` (which this wraps). Handshake-era results carry no
hints and are left as they are. ``resources/read`` results pass the server's own through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.call import Identity
from hermes_hub.protocol.upstream.surface import Surface

Ctx = ServerRequestContext[Any]
LISTS = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})


class CacheHints:
    def __init__(self, surface: Surface, identify: Callable[[Ctx], Identity]) -> None:
        self.surface, self.identify = surface, identify

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in LISTS and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and isinstance(result, dict):
            hint = self.surface.cache_hint(ctx.method, self.identify(ctx), defers(self.surface, ctx))
            result = {**result, "ttlMs": hint.ttl_ms, "cacheScope": hint.scope}
        return result


def defers(surface: Surface, ctx: Ctx) -> bool:
    """Whether this host loads tools through its own search (Claude Code, Qwen Code, Copilot CLI), by its
    ``clientInfo.name``: from its handshake, or a 2026-07-28 request's own."""
    params = getattr(ctx.session, "client_params", None)  # a host's task has no handshake of its own
    info = params.client_info if params is not None else None
    return surface.defers(info.name if info is not None else None)
