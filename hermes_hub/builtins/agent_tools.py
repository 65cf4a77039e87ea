"""``hermes_agent_run``: the agent loop as a tool any MCP host can call (see ``hermes_hub.agent.loop``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as types

from hermes_hub.agent.loop import Agent
from hermes_hub.agent.profiles import resolve
from hermes_hub.builtins.source import BuiltinTool
from hermes_hub.call import CallContext
from hermes_hub.config import HubConfig
from hermes_hub.errors import HubError

SCHEMA = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "minLength": 1, "maxLength": 20000,
                 "description": "what to do, as you would ask a person"},
        "profile": {"type": "string", "description": "an agent profile of hub.json's 'agents' (default: default)"},
        "session_id": {"type": "string", "description": "continue this session (default: a new one)"},
    },
    "required": ["task"],
    "additionalProperties": False,
}


def agent_items(get_agent: Callable[[], Agent], get_config: Callable[[], HubConfig]) -> list[BuiltinTool]:
    async def run(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            profile = resolve(get_config(), args.get("profile", "default"))
            result = await get_agent().run(args["task"], profile, ctx, session_id=args.get("session_id"))
        except HubError as e:  # no model, unknown profile or session, session busy: the caller can act on these
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.answer)],
                                    structured_content=result.structured(),
                                    is_error=result.stop_reason == "model_error")

    tool = types.Tool(
        name="agent_run",
        description=("Give a task to the hub's agent: a model that works through the tools you may use, with your "
                     "memories and the session's history, and answers. Returns the answer, with the rounds, "
                     "tool calls and stop_reason (answered, max_rounds, repeated_results, declined, cancelled, "
                     "model_error)."),
        input_schema=SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
    )
    return [BuiltinTool(tool, run)]
