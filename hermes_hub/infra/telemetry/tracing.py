"""Spans: exported over OTLP (HTTP, protobuf) when the standard ``OTEL_*`` variables name an endpoint,
and not even made when they do not.

    stop = configure()                 # at serve: None when nothing is to be exported
    with span("execute_tool notes_add", {GEN_AI_TOOL_NAME: "notes_add"}) as s:
        ...

``configure`` reads ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (and,
through the SDK, the rest: ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_TRACES_SAMPLER``...); ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none`` turn it off.
Without it no SDK tracer provider is installed: the MCP SDK's own spans fall to the API's no-op, and
``span`` here yields ``None`` without touching the context at all. Spans leave in the SDK's batch
thread, never on the event loop.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode

log = logging.getLogger("hermes_hub.infra.telemetry")
_tracer: trace.Tracer | None = None  # set by ``configure`` when spans are exported


def wanted(env: Mapping[str, str]) -> str | None:
    """Why spans should be exported (the endpoint variable that says where), or None."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() in ("none", ""):
        return None
    for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        if env.get(key, "").strip():
            return key
    return None


def configure(env: Mapping[str, str] | None = None) -> Callable[[], None] | None:
    """Install the SDK's tracer provider with an OTLP/HTTP exporter if ``env`` asks for it; return the
    function that flushes and stops it (call it at exit, off the event loop), else None."""
    global _tracer
    env = os.environ if env is None else env
    if (key := wanted(env)) is None:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    if protocol != "http/protobuf":
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported; exporting spans as http/protobuf", protocol)
    defaults = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "hermes-hub"}
    provider = TracerProvider(resource=Resource.create(defaults))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _tracer = trace.get_tracer("hermes_hub")
    log.info("exporting spans over OTLP (%s)", key)

    def stop() -> None:
        global _tracer
        _tracer = None
        provider.shutdown()

    return stop


def enabled() -> bool:
    return _tracer is not None


@contextlib.contextmanager
def span(name: str, attributes: dict[str, Any], kind: SpanKind = SpanKind.INTERNAL) -> Iterator[Span | None]:
    """A current span named ``name`` while the block runs (``None`` when spans are not exported). An
    exception leaving the block sets its status and ``error.type``, without its message (it may quote
    what the caller sent)."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(name, kind=kind, attributes=attributes, record_exception=False,
                                      set_status_on_exception=False) as current:
        try:
            yield current
        except BaseException as e:
            current.set_attribute("error.type", type(e).__qualname__)
            current.set_status(StatusCode.ERROR)
            raise
