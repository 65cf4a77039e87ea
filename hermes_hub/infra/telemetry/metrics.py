"""The hub's Prometheus metrics, in a registry of its own (one per hub), rendered at /metrics.

    metrics = Metrics()
    metrics.call_finished("notes", "notes_add", "ok", 0.012)
    metrics.watch(lambda: [family, ...])        # read at scrape time: server states, queues...
    body = metrics.render()

Calls are counted by the pipeline's telemetry step as they finish; agent runs, model requests and
tokens come from the event bus (``follow``: a subscriber like any other, so a drop there shows as
``hermes_event_drops_total{subscriber="metrics"}``). What the hub knows as state (servers, queues,
approvals waiting) is read when Prometheus scrapes, through the functions given to ``watch``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from hermes_hub.infra.events import Bus, ModelRequestFinished, RunFinished

log = logging.getLogger("hermes_hub.infra.telemetry")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class _Watched(Collector):
    def __init__(self, read: Callable[[], Iterable[Metric]]) -> None:
        self.read = read

    def collect(self) -> Iterable[Metric]:
        try:
            return list(self.read())
        except Exception:  # noqa: BLE001 - one broken reading must not hide every other metric
            log.exception("a metrics reading failed")
            return []


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.calls = Counter("hermes_tool_calls", "Tool calls through the pipeline, by server, tool and outcome",
                             ["server", "tool", "outcome"], registry=r)
        self.latency = Histogram("hermes_tool_call_seconds", "Time of a tool call through the pipeline",
                                 ["server", "tool"], buckets=SECONDS, registry=r)
        self.runs = Counter("hermes_agent_runs", "Agent runs finished, by stop reason", ["stop_reason"], registry=r)
        self.model_requests = Counter("hermes_model_requests", "Model requests of agent runs, by model and outcome",
                                      ["model", "outcome"], registry=r)
        self.tokens = Counter("hermes_model_tokens", "Model tokens of agent runs, by model and direction",
                              ["model", "direction"], registry=r)
        self.model_latency = Histogram("hermes_model_request_seconds", "Time of a model request", ["model"],
                                       buckets=SECONDS, registry=r)
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def call_finished(self, server: str, tool: str, outcome: str, seconds: float) -> None:
        key = (server, tool, outcome)
        children = self._children.get(key)
        if children is None:  # labels() costs a lock and a dict walk: look each pair up once
            children = self._children[key] = (self.calls.labels(server, tool, outcome), self.latency.labels(server, tool))
        children[0].inc()
        children[1].observe(seconds)

    def watch(self, read: Callable[[], Iterable[Metric]]) -> None:
        """Have ``read`` (quick, synchronous) add its metric families to every scrape."""
        self.registry.register(_Watched(read))

    def render(self) -> bytes:
        return generate_latest(self.registry)

    async def follow(self, bus: Bus) -> None:
        """Count agent runs, model requests and tokens from ``bus`` until cancelled."""
        with bus.subscribe("metrics", accept=lambda e: isinstance(e, ModelRequestFinished | RunFinished)) as events:
            async for event in events:
                if isinstance(event, RunFinished):
                    self.runs.labels(event.stop_reason).inc()
                    continue
                self.model_requests.labels(event.model, "error" if event.error else "ok").inc()
                self.model_latency.labels(event.model).observe(event.seconds)
                if event.input_tokens:
                    self.tokens.labels(event.model, "input").inc(event.input_tokens)
                if event.output_tokens:
                    self.tokens.labels(event.model, "output").inc(event.output_tokens)
