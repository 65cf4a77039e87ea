"""The answer to a stdio line that is not a valid JSON-RPC message (the SDK drops those silently).

JSON-RPC 2.0 §5: invalid JSON gets a parse error (-32700) with id null; valid JSON that is not a
valid request gets -32600 with the request's id when it can be read, else id null. Notifications
(a ``method`` and no ``id``) and responses (``result`` or ``error``) are never answered.

    reject(b'{"jsonrpc":"2.0","id":')     # b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,...}}'
    reject(b'{"jsonrpc":"1.0","id":3,"method":"ping"}')   # ... "id":3, "error":{"code":-32600, ...}
    reject(b'{"method":"notifications/x","params":7}')    # None: no answer is due
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp.types as types

MAX_ID_CHARS = 1024  # a longer id is not echoed back: the answer would be mostly the id
MAX_NESTING = 128  # the SDK parses deeper messages on some paths but cannot serialise them onward
_STRING = re.compile(rb'"(?:[^"\\\\]|\\\\.)*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def screen(line: bytes) -> bytes | None:
    """Checks before the SDK parses ``line``: the answer to give instead (``b""``: drop it
    unanswered), or None to pass it on. Cheap for ordinary messages."""
    answer = too_deep(line)
    return lone_surrogate(line) if answer is None else answer


def too_deep(line: bytes, limit: int = MAX_NESTING) -> bytes | None:
    """The answer to a message nested deeper than ``limit`` levels (``b""``: drop it unanswered),
    or None. Cheap unless the line holds at least ``limit`` brackets."""
    if line.count(b"[") + line.count(b"{") < limit:
        return None
    skeleton = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    for _ in range(limit):  # each pass removes one level
        shorter = _INNERMOST.sub(b"", skeleton)
        if not shorter or shorter == skeleton:  # shallow enough, or malformed (the parser says so)
            return None
        skeleton = shorter
    return reject(line, f"nested deeper than {limit} levels; flatten the arguments") or b""


def lone_surrogate(line: bytes) -> bytes | None:
    """The answer to a message whose strings hold a lone UTF-16 surrogate (``"\\ud800"``): valid
    JSON text but no valid Unicode, so it can be neither stored nor forwarded. ``b""``: drop it
    unanswered (a notification); None: it has none (checked only when such an escape appears at
    all; surrogate pairs, e.g. escaped emoji, are fine)."""
    if b"\\u" not in line or not _SURROGATE_ESCAPE.search(line):
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None  # not this function's problem: the normal path answers it
    bad = _first_lone(value)
    if bad is None:
        return None
    if not isinstance(value, dict) or "id" not in value or "method" not in value:
        return b""  # a notification or a response: dropped, as nothing answers those
    msg_id = value["id"] if isinstance(value["id"], int | str) and not isinstance(value["id"], bool) else None
    return error_line(msg_id, types.INVALID_PARAMS, f"Invalid params: the string {bad!r} holds a lone UTF-16 "
                      f"surrogate, which is not Unicode; send text as UTF-8 (or escape surrogate pairs)")


def _first_lone(value: Any) -> str | None:
    stack = [value]
    while stack:  # iterative: the message may be nested deeply
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item if len(item) <= 40 else f"{item[:40]}..."
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def reject(line: bytes, problem: str | None = None) -> bytes | None:
    """The JSON line to answer ``line`` with, or None when no answer is due."""
    try:
        value = json.loads(line)
    except RecursionError:
        return error_line(None, types.INVALID_REQUEST, "Invalid request: JSON nested too deeply")
    except ValueError as e:  # includes invalid UTF-8 and integers too long to read
        return error_line(None, types.PARSE_ERROR, f"Parse error: {_short(str(e))}; send one JSON-RPC message per line")
    if isinstance(value, list):
        return error_line(None, types.INVALID_REQUEST, "Invalid request: batches are not supported; send one message "
                      "per line")
    if not isinstance(value, dict):
        return error_line(None, types.INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    if "id" not in value and isinstance(value.get("method"), str) or "result" in value or "error" in value:
        return None  # a notification, or a response to nothing the hub asked: never answered
    msg_id = value.get("id")
    readable = (isinstance(msg_id, int) and not isinstance(msg_id, bool)) or (
        isinstance(msg_id, str) and len(msg_id) <= MAX_ID_CHARS)
    why = problem or _what_is_wrong(value)
    return error_line(msg_id if readable else None, types.INVALID_REQUEST, f"Invalid request: {why}")


def misread_request(line: bytes) -> bytes | None:
    """The answer to a request whose ``id`` is unusable (an object, a float, null...), which the SDK
    would read as a notification and never answer; None if ``line`` is not such a request."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(value, dict) and "id" in value and isinstance(value.get("method"), str)):
        return None
    if isinstance(value["id"], int | str) and not isinstance(value["id"], bool):
        return None  # a usable id: the SDK reads it as a request
    return error_line(None, types.INVALID_REQUEST, f"Invalid request: {_what_is_wrong(value)}")


def too_long(limit: int) -> bytes:
    """The answer to a line longer than ``limit`` bytes (skipped unread, so its id is unknown)."""
    return error_line(None, types.INVALID_REQUEST, f"Invalid request: a message longer than {limit // (1 << 20)} MiB "
                  "was skipped; send large content as a resource or in smaller pieces")


def _what_is_wrong(value: dict[str, Any]) -> str:
    if value.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if not isinstance(value.get("method"), str):
        return '"method" must be a string'
    msg_id = value.get("id")
    if not isinstance(msg_id, int | str) or isinstance(msg_id, bool):
        return '"id" must be a string or an integer'
    if isinstance(msg_id, str) and len(msg_id) > MAX_ID_CHARS:
        return f'"id" is longer than {MAX_ID_CHARS} characters'
    if "params" in value and not isinstance(value["params"], dict):
        return '"params" must be an object'
    return "not a valid JSON-RPC 2.0 request"


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def error_line(msg_id: Any, code: int, message: str) -> bytes:
    """A JSON-RPC error as one line of JSON (``id`` null included, as the spec wants)."""
    body = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"
