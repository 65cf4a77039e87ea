"""A tool's result as the model reads it: whole when it fits, else cut with the artifact that keeps it.

    full, mime = text_of(result)
    if empty(result, full): ...                       # the model is told plainly that nothing was found
    shown = cut(full, mime, limit, artifact_id="art_…", reader="hermes_artifact_read")

A JSON result is cut so it stays valid JSON (``aggregation.truncation.shrink``, as the catalog cuts a
host's results): long strings shortened, long arrays trimmed, and a ``_hermes_cut`` key saying what was
left out and how to read it all. Text is cut at ``limit`` characters with a line saying the same.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types

from hermes_hub.core.aggregation.truncation import shrink

CUT_KEY = "_hermes_cut"
NOTE_ROOM = 500  # characters kept for the note on what was cut
NOTHING = ("The tool returned no data ({what}): nothing was found for this call. Tell the person nothing was "
           "found; do not guess or invent a result.")


def text_of(result: types.CallToolResult) -> tuple[str, str]:
    """The result's whole text and its type (``application/json`` when it is JSON)."""
    parts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False)]
    text = "\n".join(parts).strip()
    return text, "application/json" if _parsed(text) is not None else "text/plain"


def empty(result: types.CallToolResult, text: str) -> str | None:
    """What the tool returned when it returned no data (an empty text, list or object), else None."""
    if result.is_error:
        return None
    if not text:  # no text, or empty text beside structured content the model does not read
        return "an empty result"
    value = _parsed(text)
    if value == []:
        return "an empty list"
    if value == {}:
        return "an empty object"
    if value == "" or (value is None and text in ('""', "null")):
        return "an empty text"
    return None


def nothing_found(what: str) -> str:
    return NOTHING.format(what=what)


def cut(text: str, mime_type: str, limit: int, *, artifact_id: str | None, reader: str | None) -> str:
    """``text`` when it fits ``limit`` characters, else a cut copy that says what was left out."""
    if len(text) <= limit:
        return text
    how = (f"the whole result is artifact {artifact_id}: read it page by page with {reader}"
           f"(artifact_id=\"{artifact_id}\", offset=...)" if artifact_id and reader else
           "the rest is not available: ask for less, e.g. a narrower query or a smaller page")
    if mime_type == "application/json":
        shown = _cut_json(text, limit, artifact_id, how)
        if shown is not None:
            return shown
    room = max(0, limit - NOTE_ROOM)
    offset = f"; continue at offset {room}" if artifact_id else ""
    return text[:room] + f"\n[cut: the result had {len(text):,} characters; only the first {room:,} are shown; {how}{offset}]"


def _cut_json(text: str, limit: int, artifact_id: str | None, how: str) -> str | None:
    value = _parsed(text)
    wrapped = value if isinstance(value, dict) else {"result": value}
    shrunk, removed = shrink(wrapped, max(200, limit - NOTE_ROOM))
    if shrunk is None:
        return None
    note: dict[str, Any] = {"total_chars": len(text), "removed": removed or ["parts of the result"], "read_all": how}
    if artifact_id:
        note["artifact_id"] = artifact_id
    return json.dumps({CUT_KEY: note, **shrunk}, ensure_ascii=False)


def _parsed(text: str) -> Any:
    """The JSON value ``text`` holds (None if it is not JSON, or is ``null``)."""
    if not text or text[0] not in "[{\"":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
