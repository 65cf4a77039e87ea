"""Telemetry of a served hub (issue 22 §4, §5): one trace across a host, the hub and a downstream server,
exported over OTLP to a receiver here that decodes the real protobuf wire format; /metrics parsed with
prometheus_client's own parser; the event stream followed with `hermes-hub events`, as the audit's
visibility rules allow."""

from __future__ import annotations

import gzip
import json
import secrets
import subprocess
import sys
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support import PROJECT, as_user, hub_env, serve_asgi, serve_process, until, until_listed

pytestmark = pytest.mark.anyio
ADMIN_TOKEN = "alice-admin-token-0123456789abcdef"
BOB_TOKEN = "bob-user-token-0123456789abcdef"
SPAN_KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT"}


class Receiver:
    """An OTLP/HTTP trace receiver: every span of every ExportTraceServiceRequest posted to /v1/traces."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.url = ""

    def app(self, base: str) -> Starlette:
        async def traces(request: Request) -> Response:
            body = await request.body()
            if request.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            message = ExportTraceServiceRequest()
            message.ParseFromString(body)
            for resource in message.resource_spans:
                service = {a.key: a.value.string_value for a in resource.resource.attributes}.get("service.name")
                for scope in resource.scope_spans:
                    for s in scope.spans:
                        self.spans.append({
                            "name": s.name, "trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                            "parent": s.parent_span_id.hex(), "kind": SPAN_KINDS.get(s.kind, s.kind),
                            "service": service,
                            "attributes": {a.key: _value(a.value) for a in s.attributes}})
            return Response(b"", media_type="application/x-protobuf")
        return Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])

    def of(self, trace_id: str) -> list[dict[str, Any]]:
        return [s for s in self.spans if s["trace_id"] == trace_id]


def _value(v: Any) -> Any:
    return getattr(v, v.WhichOneof("value")) if v.WhichOneof("value") else None


def traceparent() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


@pytest.fixture(scope="module")
async def hub(tmp_path_factory):
    """A served hub exporting spans to a receiver here, with a downstream server that records its
    traceparent, alice's admin token, bob's user token, and a scripted agent that calls that server."""
    tmp = tmp_path_factory.mktemp("telemetry")
    (tmp / "script.json").write_text(json.dumps([
        {"when": "trace me", "tool_calls": [{"name": "traced_seen", "arguments": {}}]},
        {"text": "traced."}]))
    config = {
        "mcpServers": {"traced": {"command": sys.executable, "args": ["-m", "tests.telemetry.trace_server"],
                                  "cwd": str(PROJECT)}},
        "auth": {"tokens": [{"token": ADMIN_TOKEN, "user": "alice", "role": "admin"},
                            {"token": BOB_TOKEN, "user": "bob"}]},
        "agent": {"provider": "scripted", "script": "script.json"},
    }
    receiver = Receiver()
    async with serve_asgi(receiver.app) as otlp:
        receiver.url = otlp
        with pytest.MonkeyPatch.context() as env:  # the served hub inherits them
            env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp)
            env.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")  # ms: spans leave quickly
            env.setenv("OTEL_SERVICE_NAME", "hub-under-test")
            async with serve_process(config, tmp) as served:
                yield served, receiver


def base(served: Any) -> str:
    return served.url.removesuffix("/mcp")


@pytest.mark.slow
async def test_one_trace_spans_the_host_the_hub_and_the_downstream_server(hub):
    served, receiver = hub
    header, trace_id, host_span = traceparent()
    async with as_user(served.url, ADMIN_TOKEN) as host:
        result = await host.call_tool("traced_seen", {}, meta={"traceparent": header})
    downstream = result.content[0].text
    assert downstream.split("-")[1] == trace_id, downstream  # the server got the hub's traceparent, same trace
    passed_on = downstream.split("-")[2]
    spans = await until(lambda: (found := receiver.of(trace_id)) and
                        {"tools/call traced_seen", "execute_tool traced_seen", "MCP send tools/call seen"}
                        <= {s["name"] for s in found} and found, timeout=30)
    by_name = {s["name"]: s for s in spans}
    request = by_name["tools/call traced_seen"]  # the host's request, continued from its traceparent
    assert request["parent"] == host_span and request["kind"] == "SERVER"
    assert request["attributes"]["mcp.method.name"] == "tools/call"
    tool = by_name["execute_tool traced_seen"]
    assert tool["parent"] == request["span_id"]
    assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert tool["attributes"]["gen_ai.tool.name"] == "traced_seen"
    assert tool["attributes"]["hermes.server"] == "traced"
    send = by_name["MCP send tools/call seen"]  # the downstream request, the parent the server was told
    assert send["kind"] == "CLIENT" and send["parent"] == tool["span_id"] and send["span_id"] == passed_on
    assert {s["service"] for s in spans} == {"hub-under-test"}


@pytest.mark.slow
async def test_a_stdio_hosts_traceparent_is_continued_too_where_the_call_lane_would_take_the_call(hub):
    served, receiver = hub
    header, trace_id, host_span = traceparent()
    env = {**hub_env(), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    params = StdioServerParameters(command=sys.executable, cwd=str(PROJECT), env=env,
                                   args=["-m", "hermes_hub", "serve", "--stdio", "--config", str(served.config)])
    async with Client(params) as host:  # a 2026-07-28 host: its calls would take the hub's stdio call lane
        await until_listed(host, "traced_seen")
        result = await host.call_tool("traced_seen", {}, meta={"traceparent": header})
        assert result.content[0].text.split("-")[1] == trace_id
        spans = await until(lambda: {s["name"] for s in receiver.of(trace_id)} >= {
            "tools/call traced_seen", "execute_tool traced_seen", "MCP send tools/call seen"}, timeout=30)
    assert spans
    request = next(s for s in receiver.of(trace_id) if s["name"] == "tools/call traced_seen")
    assert request["parent"] == host_span


async def test_an_agent_run_is_a_span_with_its_model_requests_and_their_token_usage(hub):
    served, receiver = hub
    header, trace_id, _ = traceparent()
    async with as_user(served.url, ADMIN_TOKEN) as host:
        result = await host.call_tool("hermes_agent_run", {"task": "trace me"}, meta={"traceparent": header})
    assert not result.is_error, result.content
    # The run's span ends after its model requests' and may leave in a later batch: wait for all of them.
    spans = await until(lambda: (found := receiver.of(trace_id)) and
                        sum(s["name"].startswith("chat ") for s in found) >= 2 and
                        any(s["name"].startswith("invoke_agent") for s in found) and
                        any(s["name"] == "execute_tool traced_seen" for s in found) and found, timeout=30)
    run = next(s for s in spans if s["name"].startswith("invoke_agent"))
    assert run["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert all(c["parent"] == run["span_id"] and c["attributes"]["gen_ai.operation.name"] == "chat" for c in chats)
    assert all("gen_ai.request.model" in c["attributes"] and c["attributes"]["gen_ai.usage.input_tokens"] > 0
               for c in chats)
    tool = next(s for s in spans if s["name"] == "execute_tool traced_seen")  # the run's call, in the same trace
    assert tool["parent"] == run["span_id"]


async def metrics(served: Any, token: str | None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.get(base(served) + "/metrics", headers=headers)


async def test_metrics_parse_with_prometheus_client_and_count_calls_states_queues_runs_and_tokens(hub):
    served, _ = hub
    async with as_user(served.url, ADMIN_TOKEN) as host:
        await host.call_tool("traced_seen", {})
        await host.call_tool("hermes_agent_run", {"task": "trace me"})
    response = await metrics(served, ADMIN_TOKEN)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    def value(name: str, **labels: str) -> float:
        return samples[(name, tuple(sorted(labels.items())))]
    assert value("hermes_tool_calls_total", server="traced", tool="traced_seen", outcome="ok") >= 2
    assert value("hermes_tool_call_seconds_count", server="traced", tool="traced_seen") >= 2
    assert value("hermes_tool_call_seconds_bucket", server="traced", tool="traced_seen", le="+Inf") >= 2
    assert value("hermes_server_state", server="traced", state="READY") == 1
    assert value("hermes_server_state", server="traced", state="FAILED") == 0
    assert value("hermes_server_restarts_total", server="traced") == 0
    assert value("hermes_approvals_waiting") == 0
    assert ("hermes_queue_jobs", (("queue", "audit"), ("state", "pending"))) in samples
    assert value("hermes_agent_runs_total", stop_reason="answered") >= 1
    assert value("hermes_model_tokens_total", model="script.json", direction="input") > 0
    assert value("hermes_event_drops_total", subscriber="metrics") == 0


async def test_metrics_are_for_admins_only(hub):
    served, _ = hub
    assert (await metrics(served, None)).status_code == 401
    refused = await metrics(served, BOB_TOKEN)
    assert refused.status_code == 403 and "--role admin" in refused.json()["error_description"]


def events_cli(served: Any, token: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes_hub", "events", "--json", "--url", base(served),
                             "--token", token, *args], cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)


async def test_events_follow_shows_a_user_their_own_calls_only(hub):
    served, _ = hub
    follower = events_cli(served, BOB_TOKEN, "--follow")
    lines: list[dict[str, Any]] = []

    async def read() -> None:
        assert follower.stdout is not None
        while line := await anyio.to_thread.run_sync(follower.stdout.readline):
            lines.append(json.loads(line))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            async with as_user(served.url, ADMIN_TOKEN) as admin, as_user(served.url, BOB_TOKEN) as bob:
                async def seen_own() -> bool:  # bob calls until his follower has seen one call whole
                    await admin.call_tool("traced_seen", {})
                    await bob.call_tool("traced_seen", {})
                    return bool(whole_calls(lines))
                await until(seen_own, timeout=30, every=0.2)
            follower.terminate()
    finally:
        follower.kill()
        follower.wait(10)
        follower.stdout.close()  # type: ignore[union-attr]
    assert {e["user_id"] for e in lines} == {"bob"}
    requested, finished = whole_calls(lines)[0]  # (the follower may have come in mid-way through an earlier one)
    assert finished["tool"] == "traced_seen" and finished["outcome"] == "ok" and finished["server"] == "traced"
    assert requested["seq"] < finished["seq"]


def whole_calls(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(ToolCallRequested, ToolExecutionFinished) of each call whose both events are in ``events``."""
    asked = {e["call_id"]: e for e in events if e["type"] == "ToolCallRequested"}
    return [(asked[e["call_id"]], e) for e in events
            if e["type"] == "ToolExecutionFinished" and e["call_id"] in asked]


async def test_a_runs_whole_event_stream_is_pulled_by_its_id(hub):
    served, _ = hub
    async with as_user(served.url, BOB_TOKEN) as bob:
        result = await bob.call_tool("hermes_agent_run", {"task": "trace me"})
    run_id = result.structured_content["run_id"]
    done = await anyio.to_thread.run_sync(lambda: subprocess.run(
        [sys.executable, "-m", "hermes_hub", "events", "--json", "--url", base(served), "--token", ADMIN_TOKEN,
         "--run", run_id], cwd=PROJECT, capture_output=True, text=True, timeout=60))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events] == [
        "UserMessageReceived", "ContextUpdated", "ModelRequestFinished", "TaskPlanGenerated", "ToolCallRequested",
        "ToolExecutionFinished", "ContextUpdated", "ModelRequestFinished", "RunFinished"]
    assert {e["run_id"] for e in events} == {run_id} and {e["user_id"] for e in events} == {"bob"}
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert events[3]["tools"] == ["traced_seen"] and events[-1]["stop_reason"] == "answered"
    refused = await anyio.to_thread.run_sync(lambda: subprocess.run(
        [sys.executable, "-m", "hermes_hub", "events", "--url", base(served), "--token", BOB_TOKEN,
         "--run", run_id, "--user", "alice"], cwd=PROJECT, capture_output=True, text=True, timeout=60))
    assert refused.returncode == 1 and "your own events only (user 'bob')" in refused.stderr
