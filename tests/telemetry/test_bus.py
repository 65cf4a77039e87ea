"""The event bus and the pipeline's telemetry step, in process (issue 22 §5): a slow subscriber never
slows a call, its drops are counted; a run's stream is kept, bounded; the step tells of every call,
also one that raises; spans are not even made when no OTEL_* variable says where to send them."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest

from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.events import Bus, ToolCallRequested, ToolExecutionFinished
from hermes_hub.core.pipeline import Call, Pipeline
from hermes_hub.core.pipeline.telemetry import Telemetry
from hermes_hub.infra.telemetry import tracing
from hermes_hub.infra.telemetry.metrics import Metrics

pytestmark = pytest.mark.anyio


def call(run_id: str | None = "run_1", user: str = "ana") -> Call:
    ctx = CallContext(Identity(user), run_id=run_id)
    return Call("notes_add", "notes", "add", {}, ctx, types.Tool(name="notes_add", input_schema={"type": "object"}))


def requested(run_id: str | None, n: int) -> ToolCallRequested:
    return ToolCallRequested(run_id=run_id, user_id="ana", call_id=f"c{n}", tool="t", server="s")


async def test_a_subscriber_that_never_reads_drops_what_does_not_fit_and_publishing_never_waits():
    bus = Bus()
    with bus.subscribe("slow", size=10) as slow, bus.subscribe("keeping-up", size=10_000) as fast:
        with anyio.fail_after(5):  # publish is synchronous: nothing here could wait for a reader
            for n in range(1000):
                bus.publish(requested("run_1", n))
        assert bus.dropped["slow"] == 990 and bus.dropped["keeping-up"] == 0
        assert [(await slow.receive()).call_id for _ in range(10)] == [f"c{n}" for n in range(10)]
        assert (await fast.receive()).seq == 1
    assert bus.subscribers == 0


async def test_a_runs_stream_is_kept_in_order_bounded_and_only_for_the_most_recent_runs():
    bus = Bus(run_events=5, runs=2)
    for n in range(8):
        bus.publish(requested("run_a", n))
    bus.publish(requested(None, 99))  # a host's own call: belongs to no run
    assert [e.call_id for e in bus.stream("run_a")] == ["c3", "c4", "c5", "c6", "c7"]
    assert [e.seq for e in bus.stream("run_a")] == [4, 5, 6, 7, 8]
    bus.publish(requested("run_b", 0))
    bus.publish(requested("run_c", 0))  # a third run: the least recently active (run_a) is forgotten
    assert bus.stream("run_a") == [] and len(bus.stream("run_c")) == 1


async def test_the_telemetry_step_tells_of_a_call_that_raises_and_counts_it_as_an_error():
    bus, metrics = Bus(), Metrics()
    pipeline = Pipeline([Telemetry(bus, metrics)])

    async def broken() -> Any:
        raise RuntimeError("the server fell over")

    async def fine() -> Any:
        return types.CallToolResult(content=[], is_error=True)

    with bus.subscribe("test") as events:
        with pytest.raises(RuntimeError):
            await pipeline.run(call(), broken)
        await pipeline.run(call(run_id=None), fine)
        seen = [await events.receive() for _ in range(4)]
    assert [type(e) for e in seen] == [ToolCallRequested, ToolExecutionFinished] * 2
    assert [e.outcome for e in seen if isinstance(e, ToolExecutionFinished)] == ["error", "tool_error"]
    assert seen[0].run_id == "run_1" and seen[2].run_id is None and seen[0].call_id == seen[1].call_id
    text = metrics.render().decode()
    assert 'hermes_tool_calls_total{outcome="error",server="notes",tool="notes_add"} 1.0' in text
    assert 'hermes_tool_calls_total{outcome="tool_error",server="notes",tool="notes_add"} 1.0' in text


def test_spans_are_exported_only_when_an_otel_endpoint_is_set_and_not_disabled():
    assert tracing.wanted({}) is None
    assert tracing.wanted({"OTEL_SERVICE_NAME": "x"}) is None
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) == "OTEL_EXPORTER_OTLP_ENDPOINT"
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}) is None
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}) is None
    assert tracing.configure({}) is None and not tracing.enabled()  # the API's no-op; span() makes nothing
    with tracing.span("execute_tool x", {}) as current:
        assert current is None


def test_the_grafana_dashboard_reads_only_metrics_the_hub_exports():
    import json
    import re
    from pathlib import Path

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "docs" / "grafana.json").read_text())
    used = {m for p in dashboard["panels"] for t in p["targets"] for m in re.findall(r"hermes_[a-z_]+", t["expr"])}
    exported = {"hermes_tool_calls_total", "hermes_tool_call_seconds_bucket", "hermes_server_state",
                "hermes_server_restarts_total", "hermes_queue_jobs", "hermes_agent_runs_total",
                "hermes_model_tokens_total", "hermes_approvals_waiting", "hermes_event_drops_total"}
    assert used <= exported, used - exported


def test_without_exported_spans_the_hubs_servers_make_no_request_spans_at_all():
    from hermes_hub.infra.config import parse_config
    from hermes_hub.app.hub import Hub

    hub = Hub(parse_config({"mcpServers": {}}))  # not entered: only its servers are looked at
    for endpoint in hub.endpoints.values():
        assert "OpenTelemetryMiddleware" not in {type(m).__name__ for m in endpoint.server.middleware}
