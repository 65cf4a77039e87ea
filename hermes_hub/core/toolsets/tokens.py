"""What tool schemas cost a host's context, per tool, per server and per endpoint, and what lazy mode saves.

    report = token_report(hub.endpoints.values(), caller)   # {"tokenizer": ..., "endpoints": [...], ...}

Counted with OpenAI's o200k_base BPE (the ``bpe-openai`` package ships its vocabulary, so it works
offline); where that package cannot load, with a calibrated estimate: 3.7 characters a token,
the ratio o200k_base gives the JSON of ~70 real tools' definitions (tests/fixtures/tool_queries.py's
catalog). Other vendors' tokenizers differ by some percent; the ratios between endpoints hold.

A text past ``MAX_COUNTED_CHARS`` (a downstream description of megabytes) is counted on its first
``MAX_COUNTED_CHARS`` characters and the rest extrapolated at the same rate: exact for any real
tool, cheap for a huge one (bpe-openai refuses a text of a million characters outright).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import mcp.types as types

from hermes_hub.core.toolsets.deferral import HINT_KEYS
from hermes_hub.core.toolsets.search import server_of

if TYPE_CHECKING:
    from hermes_hub.infra.call import Identity
    from hermes_hub.core.toolsets.view import View

log = logging.getLogger("hermes_hub.core.toolsets")


class Endpoint(Protocol):
    """What the report reads of an endpoint (``hermes_hub.protocol.upstream.endpoint``, which sits above toolsets)."""

    toolset: str | None
    view: View

    @property
    def path(self) -> str: ...

CHARS_PER_TOKEN = 3.7  # o200k_base on tool definitions' JSON, measured on the interop catalog
MAX_COUNTED_CHARS = 100_000  # counted exactly (~10 ms); a longer text's rest is extrapolated


@lru_cache(maxsize=1)
def tokenizer() -> tuple[str, Callable[[str], int]]:
    """``(what counts, count(text))``: the real BPE where it loads, else the calibrated estimate."""
    try:
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
    except Exception as e:  # noqa: BLE001 - not installed, or no wheel for this platform
        log.info("token counts are estimates (%s); pip install bpe-openai for exact o200k_base counts", e)
        return (f"estimate ({CHARS_PER_TOKEN} characters a token, calibrated against o200k_base)",
                _estimate)
    return "o200k_base (bpe-openai, offline)", lambda text: _bounded(text, lambda part: len(encoding.encode(part)))


def _estimate(text: str) -> int:
    return round(len(text) / CHARS_PER_TOKEN)


def _bounded(text: str, count: Callable[[str], int]) -> int:
    """``count(text)``, on the head of a text past ``MAX_COUNTED_CHARS`` scaled to its length; the
    estimate where the tokenizer refuses the text (it has limits of its own)."""
    head = text[:MAX_COUNTED_CHARS]
    try:
        n = count(head)
    except Exception:  # noqa: BLE001 - e.g. bpe-openai's TokenLimitError: a count, not a failure
        return _estimate(text)
    return n if len(head) == len(text) else round(n * len(text) / max(len(head), 1))


def tool_json(tool: types.Tool) -> str:
    """A tool's definition as tools/list puts it on the wire, but the hints only its host reads
    (``deferral.HINT_KEYS``: no host sends them to a model)."""
    data = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    if (meta := data.get("_meta")) and any(k in meta for k in HINT_KEYS):
        data["_meta"] = {k: v for k, v in meta.items() if k not in HINT_KEYS} or None
        if data["_meta"] is None:
            del data["_meta"]
    return json.dumps(data, ensure_ascii=False)


class ToolCosts:
    """Token counts per tool object, kept while the catalog keeps the object."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[types.Tool, int]] = {}

    def __call__(self, tool: types.Tool) -> int:
        hit = self._memo.get(id(tool))
        if hit is None or hit[0] is not tool:
            if len(self._memo) > 20_000:
                self._memo.clear()
            hit = (tool, tokenizer()[1](tool_json(tool)))
            self._memo[id(tool)] = hit
        return hit[1]


_COSTS = ToolCosts()


def estimated_tokens(tool: types.Tool) -> int:
    """A tool's cost by the calibrated estimate, without loading the tokenizer (~0.5 s the first time):
    for what is decided on a listing's path (``deferral.HostHints``' budget)."""
    return _estimate(tool_json(tool))


def listing_tokens(tools: Iterable[types.Tool]) -> int:
    return sum(_COSTS(t) for t in tools)


def per_server(tools: Iterable[types.Tool]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for t in tools:
        row = out.setdefault(server_of(t) or "?", {"tools": 0, "tokens": 0})
        row["tools"] += 1
        row["tokens"] += _COSTS(t)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["tokens"]))


def token_report(endpoints: Iterable[Endpoint], caller: Identity) -> dict[str, Any]:
    """Schema cost as ``caller`` sees each endpoint: listed now, listed whole, listed lazily."""
    rows = []
    whole: list[types.Tool] = []
    for ep in endpoints:
        everything = ep.view.tools_in_scope(caller)
        listed, all_tokens = ep.view.list_tools(caller), listing_tokens(everything)
        lazy_tokens = listing_tokens(ep.view.always_listed(caller)) + listing_tokens(ep.view.meta)
        rows.append({"endpoint": ep.path, "expose": "lazy" if ep.view.scope().lazy else "all",
                     "tools_listed": len(listed), "tokens": listing_tokens(listed),
                     "tools_reachable": len(everything), "tokens_all": all_tokens, "tokens_lazy": lazy_tokens,
                     "lazy_saves": all_tokens - lazy_tokens})
        if ep.toolset is None:
            whole = everything
    return {"tokenizer": tokenizer()[0], "endpoints": rows, "servers": per_server(whole),
            "tools": {t.name: _COSTS(t) for t in sorted(whole, key=lambda t: -_COSTS(t))}}
