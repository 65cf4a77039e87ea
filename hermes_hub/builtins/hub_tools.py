"""``hermes_hub_status``: the hub describing itself, as a tool and as a resource."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp.types as types

from hermes_hub.builtins.source import BuiltinResource, BuiltinTool, json_result

STATUS_URI = "hub://status"


def status_items(get_status: Callable[[], dict[str, Any]]) -> list[BuiltinTool | BuiltinResource]:
    async def status_tool(args: dict[str, Any]) -> types.CallToolResult:
        return json_result(get_status())

    async def status_text() -> str:
        return json.dumps(get_status(), indent=2, ensure_ascii=False)

    tool = types.Tool(
        name="hub_status",
        description=(
            "Show the hub's downstream servers: state (READY, STARTING, RESTARTING, CRASH_LOOP, FAILED, ...), "
            "restarts, tool/resource/prompt counts, protocol version, last error, name collisions, and an "
            "estimate of the tokens the tool list costs."
        ),
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    resource = types.Resource(
        uri=STATUS_URI, name="hub_status", description="The hub's status as JSON", mime_type="application/json"
    )
    return [BuiltinTool(tool, status_tool), BuiltinResource(resource, status_text)]
