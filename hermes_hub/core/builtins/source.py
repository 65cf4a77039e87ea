"""A catalog source made of Python handlers: how built-in tools are registered, like any server."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from hermes_hub.core.aggregation.results import json_result  # noqa: F401  (re-exported: every built-in returns it)
from hermes_hub.infra.call import CallContext, require
from hermes_hub.infra.errors import DownstreamError, InvalidInput, UnknownName

ToolHandler = Callable[[dict[str, Any], CallContext], Awaitable[types.CallToolResult]]
PromptRenderer = Callable[[dict[str, str], CallContext], Awaitable[types.GetPromptResult]]
ResourceReader = Callable[[CallContext], Awaitable[str]]
TemplateReader = Callable[[dict[str, str], CallContext], Awaitable[str]]
# The end of a merged tool's description: its name keeps working for one release (docs/catalog.md, "A lean list").
DEPRECATED = "Deprecated: this name goes in the next release; use "


@dataclass(frozen=True)
class BuiltinTool:
    tool: types.Tool
    handler: ToolHandler
    admin_only: bool = False  # hidden from, and refused to, everyone but admins
    private: tuple[str, ...] = ()  # arguments the audit records only by size (e.g. a memory's text)


@dataclass(frozen=True)
class BuiltinResource:
    resource: types.Resource
    read: ResourceReader
    # a resource hosts may subscribe to: watch(caller, watcher, notify) / unwatch(watcher) (e.g. the inbox)
    watch: Callable[[Any, Hashable, Callable[[], Awaitable[None]]], None] | None = None
    unwatch: Callable[[Hashable], None] | None = None


@dataclass(frozen=True)
class BuiltinTemplate:
    template: types.ResourceTemplate
    read: TemplateReader

    def match(self, uri: str) -> dict[str, str] | None:
        parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", self.template.uri_template)
        pattern = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
        m = re.fullmatch(pattern, uri)
        return m.groupdict() if m else None


@dataclass(frozen=True)
class BuiltinPrompt:
    prompt: types.Prompt
    render: PromptRenderer


@dataclass(frozen=True)
class BuiltinPrompts:
    """Prompts that follow the config (e.g. one per agent profile): ``current()`` is asked at every listing."""

    current: Callable[[], list[BuiltinPrompt]]


class Builtins:
    """Always READY; exposes whatever tools and resources were registered."""

    name = "hermes"
    ready = True
    error = None

    def __init__(self) -> None:
        self._tools: dict[str, BuiltinTool] = {}
        self._resources: dict[str, BuiltinResource] = {}
        self._templates: list[BuiltinTemplate] = []
        self._prompts: list[BuiltinPrompts] = []

    def add(self, *items: BuiltinTool | BuiltinResource | BuiltinTemplate | BuiltinPrompts) -> None:
        for item in items:
            if isinstance(item, BuiltinTool):
                self._tools[item.tool.name] = item
            elif isinstance(item, BuiltinResource):
                self._resources[item.resource.uri] = item
            elif isinstance(item, BuiltinPrompts):
                self._prompts.append(item)
            else:
                self._templates.append(item)

    def _current_prompts(self) -> dict[str, BuiltinPrompt]:
        return {p.prompt.name: p for group in self._prompts for p in group.current()}

    @property
    def prompts(self) -> list[types.Prompt]:
        return [p.prompt for p in self._current_prompts().values()]

    @property
    def templates(self) -> list[types.ResourceTemplate]:
        return [t.template for t in self._templates]

    @property
    def tools(self) -> list[types.Tool]:
        return [t.tool for t in self._tools.values()]

    @property
    def resources(self) -> list[types.Resource]:
        return [r.resource for r in self._resources.values()]

    def describe_state(self) -> str:
        return "READY"

    def redact(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` as the audit may keep them: private ones replaced by their size."""
        tool = self._tools.get(name)
        if tool is None or not tool.private:
            return arguments
        return {k: f"<{len(str(v)):,} characters, not audited>" if k in tool.private else v
                for k, v in arguments.items()}

    def access(self, name: str, role: str) -> bool:
        tool = self._tools.get(name)
        return tool is None or not tool.admin_only or role == "admin"

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
                        ) -> types.CallToolResult:
        if name not in self._tools or not self.access(name, require(ctx).caller.role):
            raise UnknownName("tool", name)
        return await self._tools[name].handler(arguments or {}, ctx)

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        require(ctx)
        if uri in self._resources:
            r = self._resources[uri]
            text, mime = await r.read(ctx), r.resource.mime_type
        else:
            for t in self._templates:
                if (params := t.match(uri)) is not None:
                    text, mime = await t.read(params, ctx), t.template.mime_type
                    break
            else:
                raise UnknownName("resource", uri)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])

    @staticmethod
    def subscriber(ctx: CallContext) -> dict[str, Any]:
        """What the catalog adds to ``subscribe_resource``: who subscribes (a person's inbox tells only them)."""
        return {"caller": ctx.caller}

    async def subscribe_resource(self, uri: str, watcher: Hashable, notify: Callable[[], Awaitable[None]],
                                 caller: Any = None) -> None:
        found = self._resources.get(uri)
        if found is None or found.watch is None or caller is None:
            raise DownstreamError(self.name, f"the resource {uri!r} cannot be subscribed to; read them again to see "
                                  f"changes (of the hub's own, only the inbox can)", types.INVALID_PARAMS)
        found.watch(caller, watcher, notify)

    async def unsubscribe_resource(self, uri: str, watcher: Hashable) -> None:
        found = self._resources.get(uri)
        if found is not None and found.unwatch is not None:
            found.unwatch(watcher)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None, ctx: CallContext,
                         ) -> types.GetPromptResult:
        require(ctx)
        found = self._current_prompts().get(name)
        if found is None:
            raise UnknownName("prompt", name)
        missing = [a.name for a in found.prompt.arguments or [] if a.required and not (arguments or {}).get(a.name)]
        if missing:
            raise InvalidInput(f"prompt '{name}' needs the argument(s) {', '.join(missing)}")
        return await found.render(arguments or {}, ctx)

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult:
        return types.CompleteResult(completion=types.Completion(values=[]))


