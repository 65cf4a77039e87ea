"""The three meta-tools a lazy endpoint lists instead of every downstream schema (see ``view.py``)."""

from __future__ import annotations

import mcp.types as types

SEARCH, DESCRIBE, CALL = "tools_search", "tools_describe", "tools_call"
_READ = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def meta_tools(public: dict[str, str]) -> list[types.Tool]:
    """The meta-tools under their public names (``public[SEARCH]`` is e.g. "hermes_tools_search")."""
    search, describe = public[SEARCH], public[DESCRIBE]
    return [
        types.Tool(
            name=search,
            description=(
                "Find the tools for a task among every tool this hub can call (most are not listed, to save "
                "context). Say what you want in plain words (any language), e.g. \"remind me at 9 to call the "
                "bank\". Returns names, servers, descriptions and scores; then call "
                f"{describe} for their parameters and {public[CALL]} to run one."),
            input_schema={"type": "object", "properties": {
                "query": {"type": "string", "minLength": 1, "description": "what you want to do"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                          "description": "how many tools to return"}},
                "required": ["query"], "additionalProperties": False},
            annotations=_READ,
        ),
        types.Tool(
            name=describe,
            description=(f"The full definitions (input and output schemas, annotations) of tools found with "
                         f"{search}, by name."),
            input_schema={"type": "object", "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 50}},
                "required": ["names"], "additionalProperties": False},
            annotations=_READ,
        ),
        types.Tool(
            name=public[CALL],
            description=(f"Call a tool found with {search} by its name, with its arguments (see {describe} for "
                         f"their schema). Returns exactly what the tool returns."),
            input_schema={"type": "object", "properties": {
                "name": {"type": "string", "minLength": 1},
                "arguments": {"type": "object", "description": "the tool's arguments", "default": {}}},
                "required": ["name"], "additionalProperties": False},
        ),
    ]
