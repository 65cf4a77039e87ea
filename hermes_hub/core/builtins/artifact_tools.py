"""``hermes_artifact_read`` and ``hub://hermes/artifacts/{artifact_id}``: whole tool results an agent run
kept when its model read a cut copy, page by page. Always the caller's own: another user's artifact id
answers "not found", like one that never existed or has expired (``artifacts.keep_days``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.agent.artifacts import MAX_PAGE, PAGE, Artifacts
from hermes_hub.core.builtins.source import BuiltinTemplate, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError

SCHEMA = {
    "type": "object",
    "properties": {
        "artifact_id": {"type": "string", "pattern": "^art_[A-Za-z0-9_-]{1,40}$",
                        "description": "the artifact id a cut tool result named (art_…)"},
        "offset": {"type": "integer", "minimum": 0, "description": "first character to read (default 0; a page's "
                                                                    "next_offset continues it)"},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE,
                  "description": f"characters to read (default {PAGE:,})"},
    },
    "required": ["artifact_id"],
    "additionalProperties": False,
}


def artifact_items(get: Callable[[], Artifacts]) -> list[BuiltinTool | BuiltinTemplate]:
    async def read(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            page = await get().page(ctx.caller.user_id, args["artifact_id"], offset=args.get("offset", 0),
                                    limit=args.get("limit", PAGE))
        except HubError as e:  # not found (another user's, expired), a bad offset: the model can act on these
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
        return json_result(page)

    async def whole(params: dict[str, str], ctx: CallContext) -> str:
        return (await get().get(ctx.caller.user_id, params["artifact_id"])).text

    return [
        BuiltinTool(types.Tool(
            name="artifact_read",
            description=("Read a page of a whole tool result that was cut for an agent run (its artifact id is in "
                         "the cut result). Returns the text from offset, and next_offset to continue (null: the end)."),
            input_schema=SCHEMA, annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)), read),
        BuiltinTemplate(types.ResourceTemplate(uri_template="hub://artifacts/{artifact_id}", name="agent artifact",
                                               mime_type="text/plain",
                                               description="A whole tool result kept for one of your agent runs"),
                        whole),
    ]
