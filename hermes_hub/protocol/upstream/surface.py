"""What an upstream server reads of what it serves: the whole ``Catalog`` at ``/mcp``, or a
toolset's ``View`` at ``/mcp/<name>``.

Both satisfy ``Surface`` structurally. It is the whole list: the upstream server, its listing
memo and the stdio call lane use nothing else, so a view that defines each member with its
toolset's scope serves nothing unscoped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Protocol

import mcp.types as types

from hermes_hub.infra.call import CallContext, Identity


class Surface(Protocol):
    @property
    def generation(self) -> Any: ...  # compared for equality: changes when any list below may have

    @property
    def prompts(self) -> dict[str, Any]: ...

    @property
    def resources(self) -> dict[str, Any]: ...

    @property
    def templates(self) -> dict[str, Any]: ...

    def list_tools(self, caller: Identity, defers: bool = False) -> list[types.Tool]: ...

    def defers(self, client_name: str | None) -> bool: ...  # a host that finds tools by its own search

    def input_schema(self, name: str) -> dict[str, Any] | None: ...

    def task_support(self, name: str) -> str | None: ...  # a tool's ``execution.taskSupport``, if it says

    def visible(self, index: dict[str, Any], caller: Identity) -> list[Any]: ...

    def listed(self, kind: str, caller: Identity) -> list[Any]: ...  # "resources", "templates", "prompts"

    def listing_key(self, caller: Identity) -> str | None: ...  # whom the caller's lists are particular to

    def cache_hint(self, method: str, caller: Identity, defers: bool = False) -> Any: ...  # ``ttl_ms``, ``scope`` of a list (2026-07-28)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
                        ) -> types.CallToolResult | types.InputRequiredResult: ...

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult: ...

    async def subscribe(self, uri: str, watcher: Hashable, notify: Callable[[], Awaitable[None]],
                        ctx: CallContext) -> None: ...

    async def unsubscribe(self, uri: str, watcher: Hashable) -> None: ...

    async def get_prompt(self, name: str, arguments: dict[str, str] | None,
                         ctx: CallContext) -> types.GetPromptResult: ...

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult: ...
