"""What the catalog is made of: sources, each mounted with its namespace, filters and policies; the
index's entries; and the name collisions it records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import mcp.types as types

from hermes_hub.core.aggregation.arguments import ArgumentCheck
from hermes_hub.core.aggregation.filters import NameFilter, RoleFilter
from hermes_hub.core.aggregation.namespace import Namespace
from hermes_hub.core.aggregation.overrides import Overrides
from hermes_hub.core.aggregation.pins import Guard
from hermes_hub.core.aggregation.retry import RetryPolicy
from hermes_hub.infra.call import CallContext, Identity


class Source(Protocol):
    """What the catalog needs of a server. ``Connection`` and the built-in tools both fit."""

    name: str
    tools: list[types.Tool]
    resources: list[types.Resource]
    templates: list[types.ResourceTemplate]
    prompts: list[types.Prompt]

    @property
    def ready(self) -> bool: ...
    def describe_state(self) -> str: ...
    async def call_tool(self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
                        ) -> types.CallToolResult | types.InputRequiredResult: ...
    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult: ...
    async def get_prompt(self, name: str, arguments: dict[str, str] | None, ctx: CallContext,
                         ) -> types.GetPromptResult: ...
    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult: ...


@dataclass(frozen=True)
class Mount:
    source: Source
    namespace: Namespace
    tool_filter: NameFilter = NameFilter()
    config_path: str = ""  # where the fix goes, e.g. "mcpServers.notes"
    access: Callable[[str, str], bool] = RoleFilter()  # (own tool name, caller's role) -> may use it
    retry: RetryPolicy = RetryPolicy(retries=0)
    roles: tuple[str, ...] | None = None  # who may see this server's resources and prompts (None: everyone)
    overrides: Overrides = Overrides()  # what hub.json says instead of the server about its tools
    guard: Guard | None = None  # pinned definitions (``guard.PinGuard``); None: nothing is pinned

    def serves(self, caller: Identity) -> bool:
        return caller.is_admin or self.roles is None or caller.role in self.roles

    def offers(self, tool: str, caller: Identity) -> bool:
        return self.access(tool, caller.role)


@dataclass
class Entry:
    mount: Mount
    original: str
    item: Any  # the public copy: types.Tool | Prompt | Resource | ResourceTemplate
    _check: ArgumentCheck | None = field(default=None, repr=False)

    @property
    def check(self) -> ArgumentCheck:
        if self._check is None:
            self._check = ArgumentCheck(self.item.name, self.item.input_schema)
        return self._check


@dataclass(frozen=True)
class Collision:
    kind: str
    public: str
    winner: str
    loser: str

    @property
    def fix(self) -> str:
        return f"set mcpServers.{self.loser}.prefix to a unique value"
