"""Telemetry: OpenTelemetry spans exported over OTLP when the standard ``OTEL_*`` variables say where
(``tracing``), and the hub's Prometheus metrics (``metrics``). Both use the attribute names of the
OpenTelemetry semantic conventions for MCP and GenAI (``semconv``)."""
