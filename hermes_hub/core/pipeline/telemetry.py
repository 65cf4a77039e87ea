"""The telemetry step, outermost: every tool call's span, its metrics and its two events.

    pipeline = Pipeline([Telemetry(bus, metrics), ...])

It publishes ``ToolCallRequested`` before the other steps run and ``ToolExecutionFinished`` after,
whatever happened (a result, a refusal by a later step, an exception, a cancellation), counts the
call by server, tool and outcome with its latency, and, when spans are exported, wraps the call in an
``execute_tool {tool}`` span (semantic-convention attributes, no arguments, no result) under the
host's request span; the downstream request the SDK makes inside it passes the trace on in ``_meta``.
"""

from __future__ import annotations

import time
from contextlib import nullcontext

import anyio
import mcp.types as types

from hermes_hub.infra.events import Bus, ToolCallRequested, ToolExecutionFinished
from hermes_hub.core.pipeline import Call, Result, Send
from hermes_hub.infra.telemetry import semconv as sc
from hermes_hub.infra.telemetry.metrics import Metrics
from hermes_hub.infra.telemetry.tracing import enabled, span

_NO_SPAN = nullcontext()  # spans not exported: not even their attributes are built


class Telemetry:
    def __init__(self, bus: Bus, metrics: Metrics) -> None:
        self.bus, self.metrics = bus, metrics

    async def __call__(self, call: Call, proceed: Send) -> Result:
        run_id, user_id = call.ctx.run_id, call.user_id
        self.bus.publish(ToolCallRequested(run_id=run_id, user_id=user_id, call_id=call.call_id, tool=call.tool,
                                           server=call.server))
        outcome = "error"
        started = time.perf_counter()
        try:
            with span(f"execute_tool {call.tool}", _attributes(call)) if enabled() else _NO_SPAN as current:
                result = await proceed()
                if isinstance(result, types.InputRequiredResult):
                    outcome = "input_required"
                elif result.is_error:
                    outcome = "tool_error"
                    if current is not None:
                        current.set_attribute(sc.ERROR_TYPE, "tool_error")
                else:
                    outcome = "ok"
                return result
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        finally:
            seconds = time.perf_counter() - started
            self.metrics.call_finished(call.server, call.tool, outcome, seconds)
            self.bus.publish(ToolExecutionFinished(run_id=run_id, user_id=user_id, call_id=call.call_id,
                                                   tool=call.tool, server=call.server, outcome=outcome,
                                                   seconds=round(seconds, 6)))


def _attributes(call: Call) -> dict[str, str]:
    attributes = {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: call.tool,
                  sc.GEN_AI_TOOL_CALL_ID: call.call_id, sc.MCP_METHOD_NAME: "tools/call",
                  sc.HERMES_SERVER: call.server, sc.HERMES_USER_ID: call.user_id}
    if call.ctx.run_id:
        attributes[sc.HERMES_RUN_ID] = call.ctx.run_id
    if call.ctx.session_id:
        attributes[sc.GEN_AI_CONVERSATION_ID] = call.ctx.session_id
    return attributes
