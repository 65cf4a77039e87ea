"""The call pipeline: the steps every tool call passes, around the call itself, in a fixed order.

    pipeline = Pipeline([telemetry, limits, approval, mask])
    result = await pipeline.run(call, send)   # telemetry(limits(approval(mask(send))))

Every tool call through the hub, from a host or from the agent loop, reaches ``Catalog.call_tool``;
once the tool is known to exist for the caller and its arguments fit its schema, the catalog builds a
``Call`` and runs the pipeline around ``send`` (the call to the server, with its retries). A step is
a plain async callable ``step(call, proceed) -> result``: it may look at the call and refuse it (return
an error result without calling ``proceed``), wait (an approval), hold something while the call runs
(a concurrency slot, a span), or change the result on its way back (masking). The first step is the
outermost. The steps, in order, are built by the hub from ``hub.json``'s ``guards`` and the
environment (``Hub._pipeline``); with none configured the list is empty and a call costs one loop.

The steps, outermost first (each a module of this package):

- ``telemetry``: always there, the call's span (exported only when ``OTEL_*`` say where), its metrics,
  and ``ToolCallRequested`` / ``ToolExecutionFinished`` on the event bus (``hermes_hub.infra.events``).
- ``limits``: ``guards.limits``, calls a minute, calls at once and the agent's model tokens a day, per
  user, tool glob and server, counted in the store so replicas share them; a call over one gets a tool
  error naming the limit and its reset.
- ``approval``: ``guards.approve``, a call that needs a person's yes waits for it, bound to the caller,
  the tool, a digest of the arguments and an expiry (``approvals``: the pending ones, in the store).
- ``mask``: ``guards.mask``, the innermost: the values its ``detectors`` find leave as placeholders,
  and the original is sealed for the audited ``hermes-hub audit --unmask CALL_ID`` (``originals``).

The steps do not import each other; each is its own module of this package. What a step learns about
a call that others (the audit row, telemetry) want goes in ``call.notes``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types

from hermes_hub.infra.call import CallContext

Result = types.CallToolResult | types.InputRequiredResult
Send = Callable[[], Awaitable[Result]]
Step = Callable[["Call", Send], Awaitable[Result]]


@dataclass
class Call:
    """One tool call on its way through the pipeline. ``tool`` is the public name the caller used,
    ``original`` the server's own; ``definition`` is the tool as the hub serves it (annotations, _meta)."""

    tool: str
    server: str
    original: str
    arguments: dict[str, Any]
    ctx: CallContext
    definition: types.Tool
    call_id: str = field(default_factory=lambda: secrets.token_hex(8))
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def user_id(self) -> str:
        return self.ctx.caller.user_id


class Pipeline:
    """The steps, outermost first. ``steps`` may be replaced whole (a reload); a call already running
    keeps the list it started with."""

    def __init__(self, steps: Sequence[Step] = ()) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)

    async def run(self, call: Call, send: Send) -> Result:
        proceed = send
        for step in reversed(self.steps):
            proceed = _bind(step, call, proceed)
        return await proceed()


def _bind(step: Step, call: Call, proceed: Send) -> Send:
    async def next_() -> Result:
        return await step(call, proceed)
    return next_


__all__ = ["Call", "Pipeline", "Result", "Send", "Step"]
