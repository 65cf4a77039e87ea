"""Tool results the hub itself builds (built-in tools, meta-tools): data as JSON text and as structured content."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types


def json_result(data: Any) -> types.CallToolResult:
    """A tool result carrying ``data`` both as JSON text and as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, indent=2, ensure_ascii=False))], structured_content=data
    )
