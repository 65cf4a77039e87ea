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
from typing import Any

import mcp.types as types

MAX_ID_CHARS = 1024  # a longer id is not echoed back: the answer would be mostly the id


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
