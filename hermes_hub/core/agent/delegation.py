"""Delegation (issue 21): a profile with ``delegates`` offers each of those profiles to its model as a tool,
``delegate_<profile>(task)``. A call starts a child run of that profile (its own tools, model and
instructions, in a session of its own) with the caller's identity, and within what the calling run may
reach: the child is offered only tools the caller's run was allowed (its profile's filter and endpoint
scope, on top of the caller's roles, which the catalog checks on every call). The depth is bounded: a run
started by a host is at depth 0, and a run at ``max_delegation_depth`` (the first run's) offers no
delegates. The child's trace names its parent; the parent's trace names the child.

    delegates = Delegates(profile, depth, resolve, start_child, event)
    delegates.tools()            # the tools to offer (none past the depth)
    await delegates.call(call, ctx, within)   # (text for the model, is_error)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import mcp.types as types

from hermes_hub.core.agent.profiles import Profile
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError
from hermes_hub.infra.models import ToolCall

PREFIX = "delegate_"
FAILED = ("model_error", "cancelled")  # a child run that ended so failed, for its caller's model


@dataclass(frozen=True)
class Depth:
    level: int = 0  # 0: a run a host started
    limit: int = 2  # the first run's max_delegation_depth
    parent: str | None = None  # the calling run's id


class ChildResult(Protocol):
    answer: str
    run_id: str
    stop_reason: str


Start = Callable[[str, Profile, CallContext, Depth], Awaitable[ChildResult]]


class Delegates:
    def __init__(self, profile: Profile, depth: Depth, resolve: Callable[[str], Profile], start: Start,
                 event: Callable[..., None], run_id: str) -> None:
        self.profile, self.depth, self.resolve, self.start, self.event = profile, depth, resolve, start, event
        self.run_id = run_id

    def tools(self) -> list[types.Tool]:
        if self.depth.level >= self.depth.limit:
            return []
        out = []
        for name in self.profile.delegates:
            try:
                role = self.resolve(name).instructions.strip().splitlines()[0][:200]
            except (HubError, IndexError):
                continue  # a profile removed since hub.json was checked is not offered
            out.append(types.Tool(
                name=f"{PREFIX}{name}"[:64],
                description=(f"Hand a subtask to the '{name}' agent ({role}). It works with its own tools and model "
                             f"within your permissions and answers; give it the whole subtask in 'task'."),
                input_schema={"type": "object", "properties": {"task": {
                    "type": "string", "minLength": 1, "maxLength": 20000,
                    "description": "the subtask, with everything the other agent needs to know"}},
                    "required": ["task"], "additionalProperties": False},
                annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False)))
        return out

    def names(self) -> set[str]:
        return {t.name for t in self.tools()}

    async def call(self, call: ToolCall, ctx: CallContext, within: frozenset[str]) -> tuple[str, bool]:
        name = call.name.removeprefix(PREFIX)
        task = call.arguments.get("task") if isinstance(call.arguments, dict) else None
        if not isinstance(task, str) or not task.strip():
            return f"Give the subtask for {call.name} as a non-empty string in 'task'.", True
        try:
            child = self.resolve(name)
        except HubError as e:
            return str(e), True
        # never more than the caller's run may reach: its allowed tools bound the child's
        scoped = ctx.replace(in_scope=lambda tool: tool in within)
        depth = Depth(self.depth.level + 1, self.depth.limit, self.run_id)
        try:
            result = await self.start(task[:20000], child, scoped, depth)
        except HubError as e:  # no model for that profile, and the like
            self.event("delegation", profile=name, depth=depth.level, error=str(e)[:500])
            return f"The '{name}' agent could not run: {e}", True
        self.event("delegation", profile=name, depth=depth.level, child_run_id=result.run_id,
                   stop_reason=result.stop_reason)
        return (f"The '{name}' agent ({result.stop_reason}, run {result.run_id}) answered: {result.answer}",
                result.stop_reason in FAILED)


def handlers(delegates: Delegates | None, ctx: CallContext, within: frozenset[str]) -> dict[str, Any]:
    """The local tools a run's calls answer themselves (not through the catalog)."""
    if delegates is None:
        return {}

    async def handle(call: ToolCall) -> tuple[str, bool]:
        return await delegates.call(call, ctx, within)

    return {name: handle for name in delegates.names()}
