"""What the pipeline's telemetry step costs a call (issue 22 §4): the same in-process call through an
empty pipeline, through the telemetry step with spans off (no OTEL_* variables: what a hub pays by
default) and with spans on (the SDK's tracer provider, spans to an in-memory exporter), in one run.

    .venv/bin/python -m bench.telemetry [--quick]
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import anyio
import mcp.types as types

from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.events import Bus
from hermes_hub.core.pipeline import Call, Pipeline
from hermes_hub.core.pipeline.telemetry import Telemetry
from hermes_hub.infra.telemetry import tracing
from hermes_hub.infra.telemetry.metrics import Metrics

RESULT = types.CallToolResult(content=[types.TextContent(type="text", text="ok")])
TOOL = types.Tool(name="echo_echo", input_schema={"type": "object"})


async def _send() -> Any:
    return RESULT


async def per_call(pipeline: Pipeline, n: int) -> float:
    """Microseconds of one call: the fastest of 7 blocks of ``n`` calls (the least disturbed by other load)."""
    ctx = CallContext(Identity("bench"))
    blocks = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(n):
            await pipeline.run(Call("echo_echo", "echo", "echo", {}, ctx, TOOL), _send)
        blocks.append((time.perf_counter() - started) / n * 1e6)
    return min(blocks)


async def run(quick: bool = False, out: TextIO = sys.stdout) -> None:
    n = 2_000 if quick else 20_000
    bus = Bus()
    empty = await per_call(Pipeline([]), n)
    off = await per_call(Pipeline([Telemetry(bus, Metrics())]), n)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    tracing._tracer = provider.get_tracer("bench")  # as configure() would, without a network exporter
    try:
        on = await per_call(Pipeline([Telemetry(bus, Metrics())]), n)
    finally:
        tracing._tracer = None
    out.write("pipeline cost per call (in process, fastest of 7 blocks of %d calls)\n" % n)
    out.write(f"  empty pipeline               {empty:8.1f} us\n")
    out.write(f"  telemetry step, spans off    {off:8.1f} us  (+{off - empty:.1f} us: metrics and two events)\n")
    out.write(f"  telemetry step, spans on     {on:8.1f} us  (+{on - empty:.1f} us; export is the SDK's thread)\n")


if __name__ == "__main__":
    anyio.run(run, "--quick" in sys.argv)
