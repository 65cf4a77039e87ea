"""``hermes_hub_status``: the hub describing itself, as a tool and as a resource."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import BuiltinResource, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext, Identity

STATUS_URI = "hub://status"


def status_items(get_status: Callable[[Identity], Awaitable[dict[str, Any]]]) -> list[BuiltinTool | BuiltinResource]:
    """The tool and the resource; ``get_status(caller)`` is what that caller may see (``Hub.report``)."""
    async def status_tool(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        return json_result(await get_status(ctx.caller))

    async def status_text(ctx: CallContext) -> str:
        return json.dumps(await get_status(ctx.caller), indent=2, ensure_ascii=False)

    tool = types.Tool(
        name="hub_status",
        description=(
            "Show the hub's downstream servers you may use: state (READY, STARTING, RESTARTING, CRASH_LOOP, "
            "FAILED, ...), restarts, tool/resource/prompt counts, protocol version, name collisions, an "
            "estimate of the tokens your tool list costs, and memory: embedder, counts of your memories. "
            "Admins also see each server's last error, exit code and stderr, and background queue depths."
        ),
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    resource = types.Resource(
        uri=STATUS_URI, name="hub_status", description="The hub's status as JSON", mime_type="application/json"
    )
    return [BuiltinTool(tool, status_tool), BuiltinResource(resource, status_text)]
