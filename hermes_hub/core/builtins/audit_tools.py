"""``hermes_audit_query`` (your own calls; admins: anyone's) and the admin-only ``hermes_hub_reload``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import mcp.types as types

from hermes_hub.services import audit
from hermes_hub.core.builtins.source import BuiltinResource, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.errors import HubError, InvalidInput
from hermes_hub.infra.storage import Store

QUERY_SCHEMA = {
    "type": "object",
    "properties": {
        "user": {"type": "string", "description": "admins only: whose calls (default: everyone's)"},
        "tool": {"type": "string", "description": "only calls of this public tool name"},
        "since": {"type": "string", "description": "ISO 8601 time, e.g. 2026-11-29T00:00:00Z"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
    },
    "additionalProperties": False,
}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def audit_items(get_store: Callable[[], Awaitable[Store]], reload: Callable[[], Awaitable[dict[str, Any]]],
                ) -> list[BuiltinTool | BuiltinResource]:
    async def rows(args: dict[str, Any], me: Identity) -> list[dict[str, Any]]:
        since = None
        if raw := args.get("since"):
            try:
                since = datetime.fromisoformat(raw)
            except ValueError:
                raise InvalidInput(f"since must be an ISO 8601 time like 2026-11-29T00:00:00Z (got {raw!r})")
        found = await audit.query(await get_store(), me.user_id, admin=me.is_admin, user=args.get("user"),
                                  tool=args.get("tool"), since=since, limit=args.get("limit", 100))
        return [e.model_dump(mode="json") for e in found]

    async def query_tool(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            return json_result({"calls": await rows(args, ctx.caller)})
        except HubError as e:
            return _error(str(e))

    async def query_text(ctx: CallContext) -> str:
        return json.dumps({"calls": await rows({}, ctx.caller)}, indent=2, ensure_ascii=False)

    async def reload_tool(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            return json_result(await reload())
        except HubError as e:
            return _error(str(e))

    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        BuiltinTool(types.Tool(name="audit_query", input_schema=QUERY_SCHEMA, annotations=read_only,
                               description="List tool calls made through the hub, newest first: yours, or "
                                           "(admins) anyone's. Secrets in arguments are masked."), query_tool),
        BuiltinResource(types.Resource(uri="hub://audit", name="audit", mime_type="application/json",
                                       description="Your latest 100 tool calls through the hub"), query_text),
        BuiltinTool(types.Tool(name="hub_reload", input_schema={"type": "object", "properties": {}},
                               description="Reload hub.json now: changed servers restart, others keep running."),
                    reload_tool, admin_only=True),
    ]
