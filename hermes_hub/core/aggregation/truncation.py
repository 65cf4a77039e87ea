"""Cut tool results that exceed the hub's size limit, saying exactly what was removed.

A cut result keeps the tool's own ``isError``: a model told that a successful call failed calls it
again and repeats its side effect. Structured content is shrunk rather than dropped (long strings
cut, long arrays shortened), so it keeps the shape a host checks against the tool's output schema.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pydantic_core

MARKER_ROOM = 600  # bytes kept free for the marker itself
MIN_STRING = 16  # structured strings are never cut shorter than this; arrays are shortened instead


def result_size(result: types.CallToolResult) -> int:
    """Bytes the result takes on the wire (close enough: the JSON of its payload)."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def rough_size(result: types.CallToolResult) -> int:
    """A cheap lower bound, so small results skip serialising."""
    n = 0
    for block in result.content:
        n += len(getattr(block, "text", "") or "") + len(getattr(block, "data", "") or "")
        res = getattr(block, "resource", None)
        n += len(getattr(res, "text", "") or "") + len(getattr(res, "blob", "") or "")
    return n


def fit_result(result: types.CallToolResult, limit: int) -> types.CallToolResult:
    """``result`` unchanged when it fits in ``limit`` bytes, else a cut copy ending in a marker."""
    structured = result.structured_content  # its JSON is a few microseconds; the whole result's, tens
    if rough_size(result) + (_json_size(structured) if structured is not None else 0) < limit // 2:
        return result
    size = result_size(result)
    if size <= limit:
        return result
    budget = limit - MARKER_ROOM
    removed: list[str] = []
    if structured is not None:
        # Tools built on the SDKs send the same data as text and as structured content: half each.
        structured, what = shrink(structured, budget // 2)
        removed += what
        budget -= _json_size(structured) if structured is not None else 0
    kept: list[types.ContentBlock] = []
    removed_blocks = cut_chars = 0
    for block in result.content:
        block_size = len(block.model_dump_json(by_alias=True, exclude_none=True).encode())
        if block_size <= budget:
            kept.append(block)
            budget -= block_size
        elif isinstance(block, types.TextContent) and budget > 64:
            # JSON escaping makes quotes and newlines cost more than a byte on the wire: scale by it.
            raw = block.text.encode()
            text = raw[: int((budget - 64) * len(raw) / block_size)].decode("utf-8", "ignore")
            cut_chars += len(block.text) - len(text)
            kept.append(block.model_copy(update={"text": text}))
            budget = 0
        else:
            removed_blocks += 1
    if cut_chars:
        removed.insert(0, f"{cut_chars:,} characters of text")
    if removed_blocks:
        removed.insert(0, f"{removed_blocks} content block{'s' * (removed_blocks != 1)}")
    outcome = "The tool reported an error" if result.is_error else "The call succeeded (do not repeat it)"
    marker = (
        f"[hermes-hub: {outcome}, but its result was {size:,} bytes, over the hub's limit of {limit:,} "
        f"(hub.max_result_bytes), so it was cut: removed {'; '.join(removed) or 'nothing'}. "
        f"To see the rest, ask for less, e.g. a narrower query or a page.]"
    )
    kept.append(types.TextContent(type="text", text=marker))
    return result.model_copy(update={"content": kept, "structured_content": structured})


def shrink(value: dict[str, Any], budget: int) -> tuple[dict[str, Any] | None, list[str]]:
    """``value`` cut to ``budget`` bytes of JSON keeping its shape, and what was removed (None: nothing fits)."""
    if _json_size(value) <= budget:
        return value, []
    longest = max(_string_lengths(value), default=0)
    cap = _largest_fitting(lambda n: _cut(value, n, None)[0], MIN_STRING, longest, budget)
    items = None
    if cap is None:  # strings at their shortest are not enough: shorten arrays too
        longest_array = max(_array_lengths(value), default=0)
        items = _largest_fitting(lambda n: _cut(value, MIN_STRING, n)[0], 0, longest_array, budget)
        if items is None:
            return None, [f"the structured content ({_json_size(value):,} bytes)"]
        cap = MIN_STRING
    cut, stats = _cut(value, cap, items)
    what = []
    if stats["chars"]:
        what.append(f"{stats['chars']:,} characters from {stats['strings']} string"
                    f"{'s' * (stats['strings'] != 1)} of the structured content")
    if stats["items"]:
        what.append(f"{stats['items']:,} array item{'s' * (stats['items'] != 1)} of the structured content")
    return cut, what


def _largest_fitting(make: Any, low: int, high: int, budget: int) -> int | None:
    """The largest n in [low, high] whose ``make(n)`` fits in ``budget`` (size grows with n), or None."""
    if _json_size(make(low)) > budget:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if _json_size(make(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def _cut(value: Any, chars: int, items: int | None, stats: dict[str, int] | None = None) -> tuple[Any, dict[str, int]]:
    stats = {"chars": 0, "strings": 0, "items": 0} if stats is None else stats
    if isinstance(value, str) and len(value) > chars:
        stats["chars"] += len(value) - chars
        stats["strings"] += 1
        return value[:chars], stats
    if isinstance(value, dict):
        return {k: _cut(v, chars, items, stats)[0] for k, v in value.items()}, stats
    if isinstance(value, list):
        if items is not None and len(value) > items:
            stats["items"] += len(value) - items
            value = value[:items]
        return [_cut(v, chars, items, stats)[0] for v in value], stats
    return value, stats


def _string_lengths(value: Any) -> list[int]:
    if isinstance(value, str):
        return [len(value)]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [n for v in children for n in _string_lengths(v)]


def _array_lengths(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _array_lengths(v)]
    if isinstance(value, list):
        return [len(value), *(n for v in value for n in _array_lengths(v))]
    return []


def _json_size(value: Any) -> int:
    try:
        return len(pydantic_core.to_json(value))
    except ValueError:  # e.g. a lone surrogate: the standard library escapes what pydantic refuses
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace"))
