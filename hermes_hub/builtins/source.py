"""A catalog source made of Python handlers: how built-in tools are registered, like any server."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from hermes_hub.errors import UnknownName

ToolHandler = Callable[[dict[str, Any]], Awaitable[types.CallToolResult]]
ResourceReader = Callable[[], Awaitable[str]]


@dataclass(frozen=True)
class BuiltinTool:
    tool: types.Tool
    handler: ToolHandler


@dataclass(frozen=True)
class BuiltinResource:
    resource: types.Resource
    read: ResourceReader


class Builtins:
    """Always READY; exposes whatever tools and resources were registered."""

    name = "hermes"
    ready = True
    templates: list[types.ResourceTemplate] = []
    prompts: list[types.Prompt] = []

    def __init__(self) -> None:
        self._tools: dict[str, BuiltinTool] = {}
        self._resources: dict[str, BuiltinResource] = {}

    def add(self, *items: BuiltinTool | BuiltinResource) -> None:
        for item in items:
            if isinstance(item, BuiltinTool):
                self._tools[item.tool.name] = item
            else:
                self._resources[item.resource.uri] = item

    @property
    def tools(self) -> list[types.Tool]:
        return [t.tool for t in self._tools.values()]

    @property
    def resources(self) -> list[types.Resource]:
        return [r.resource for r in self._resources.values()]

    def describe_state(self) -> str:
        return "READY"

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, progress: Any = None) -> types.CallToolResult:
        if name not in self._tools:
            raise UnknownName("tool", name)
        return await self._tools[name].handler(arguments or {})

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        if uri not in self._resources:
            raise UnknownName("resource", uri)
        r = self._resources[uri]
        text = await r.read()
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=r.resource.mime_type, text=text)]
        )

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        raise UnknownName("prompt", name)

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None) -> types.CompleteResult:
        return types.CompleteResult(completion=types.Completion(values=[]))


def json_result(data: Any) -> types.CallToolResult:
    """A tool result carrying ``data`` both as JSON text and as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, indent=2))], structured_content=data
    )
