"""Cut tool results that exceed the hub's size limit, saying exactly what was removed."""

from __future__ import annotations

import json

import mcp.types as types

MARKER_ROOM = 400  # bytes kept free for the marker itself


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
    if rough_size(result) < limit // 2 and result.structured_content is None:
        return result
    size = result_size(result)
    if size <= limit:
        return result
    budget = limit - MARKER_ROOM
    kept: list[types.ContentBlock] = []
    removed_blocks = cut_chars = 0
    for block in result.content:
        block_size = len(block.model_dump_json(by_alias=True, exclude_none=True).encode())
        if block_size <= budget:
            kept.append(block)
            budget -= block_size
        elif isinstance(block, types.TextContent) and budget > 64:
            text = block.text.encode()[: budget - 64].decode("utf-8", "ignore")
            cut_chars += len(block.text) - len(text)
            kept.append(block.model_copy(update={"text": text}))
            budget = 0
        else:
            removed_blocks += 1
    structured = result.structured_content
    dropped_structured = False
    if structured is not None and len(json.dumps(structured)) > budget:
        structured, dropped_structured = None, True
    parts = []
    if cut_chars:
        parts.append(f"{cut_chars:,} characters of text")
    if removed_blocks:
        parts.append(f"{removed_blocks} content block{'s' * (removed_blocks != 1)}")
    if dropped_structured:
        parts.append("the structured content")
    marker = (
        f"[hermes-hub: result truncated: the original was {size:,} bytes, over the hub's limit of {limit:,} "
        f"(hub.max_result_bytes); removed {' and '.join(parts) or 'nothing'}. Ask for less, e.g. a narrower query.]"
    )
    kept.append(types.TextContent(type="text", text=marker))
    # Without its structured content a result no longer matches the tool's output schema: say so.
    return result.model_copy(
        update={"content": kept, "structured_content": structured, "is_error": result.is_error or dropped_structured}
    )
