"""/metrics (Prometheus text format) and /events (the event bus, as server-sent events or NDJSON).

Both follow the status page's access rules (``web.access``): without tokens, the local user from a
loopback address; with them, a bearer token (or a logged-in browser). /metrics is for admins only,
as it names every server and tool. /events shows a user their own events and an admin everyone's:

    GET /events?run=RUN_ID          the run's kept events, as NDJSON, then the end
    GET /events?follow=1[&run=ID][&user=U]   server-sent events as they happen (after the run's kept ones)

``hermes-hub events --follow`` reads the second. A follower that falls behind loses events (counted
in ``hermes_event_drops_total``), it never holds a call up.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING

import anyio
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hermes_hub.downstream.connection import State
from hermes_hub.infra.events import Event
from hermes_hub.infra.telemetry.metrics import CONTENT_TYPE
from hermes_hub.infra.throttle import Throttle, Throttled
from hermes_hub.app.web.access import Access, Viewer
from hermes_hub.app.web.followers import Followers

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub
    from hermes_hub.protocol.upstream.exposure import Exposure

HEARTBEAT = 15.0  # seconds between comments on a quiet stream, so a gone follower is noticed
MAX_FILTER = 200  # characters of a run id or user name in a query


def hub_metrics(hub: Hub) -> Iterable[Metric]:
    """What the hub knows as state, read at each scrape."""
    states = GaugeMetricFamily("hermes_server_state", "1 for the state each downstream server is in",
                               labels=["server", "state"])
    restarts = CounterMetricFamily("hermes_server_restarts", "Restarts of each downstream server", labels=["server"])
    for name, conn in hub.pool.connections.items():
        current = conn.state.value
        for state in State:
            states.add_metric([name, state.value], 1.0 if state.value == current else 0.0)
        restarts.add_metric([name], float(conn.restarts))
    drops = CounterMetricFamily("hermes_event_drops", "Events a subscriber's full queue could not take",
                                labels=["subscriber"])
    for subscriber, count in sorted(hub.events.dropped.items()):
        drops.add_metric([subscriber], float(count))
    published = CounterMetricFamily("hermes_events_published", "Events published on the hub's bus")
    published.add_metric([], float(hub.events.published))
    approvals = GaugeMetricFamily("hermes_approvals_waiting", "Tool calls waiting out of band for a person's approval")
    approvals.add_metric([], float(len(hub.approvals.parked)))
    runs = GaugeMetricFamily("hermes_agent_runs_active", "Agent runs holding a slot now")
    runs.add_metric([], float(hub.run_gate.running))
    occurrences = CounterMetricFamily("hermes_schedule_occurrences", "Scheduled occurrences by what became of them",
                                      labels=["outcome"])
    for outcome, count in sorted((hub.scheduling.scheduler.stats if hub.scheduling.scheduler else {}).items()):
        occurrences.add_metric([outcome], float(count))
    lost = CounterMetricFamily("hermes_audit_rows_dropped", "Audit rows lost (a full queue, or the store refusing "
                               "them at stop); each is logged")
    lost.add_metric([], float(hub.audit_writer.dropped if hub.started else 0))
    return [states, restarts, drops, published, approvals, runs, occurrences, lost]


async def queue_depths(hub: Hub) -> GaugeMetricFamily:
    """Jobs in the durable queues by state, and audit rows not written yet."""
    family = GaugeMetricFamily("hermes_queue_jobs", "Jobs in the hub's queues, by queue and state",
                               labels=["queue", "state"])
    store = hub.store
    for queue, counts in (("extraction", await store.extraction_counts()), ("summaries", await store.summary_counts())):
        for state, n in sorted(counts.items()):
            family.add_metric([queue, state], float(n))
    family.add_metric(["audit", "pending"], float(hub.audit_writer.pending))
    return family


def telemetry_routes(hub: Hub, exposure: Exposure, throttle: Throttle, followers: Followers | None = None,
                     ) -> list[BaseRoute]:
    followers = followers or Followers()  # the served app shares one with /status/stream
    access = Access(hub, exposure, throttle)
    hub.metrics.watch(lambda: hub_metrics(hub))
    depths: list[Metric] = []
    hub.metrics.watch(lambda: depths)  # filled by each scrape just before rendering

    async def viewer_or_refusal(request: Request) -> Viewer | Response:
        try:
            viewer = await access.viewer(request)
        except Throttled as e:
            return JSONResponse({"error": "too_many_requests", "error_description": e.sentence}, 429,
                                {"retry-after": str(e.retry_after)})
        if viewer is None:
            return JSONResponse({"error": "unauthorized", "error_description":
                                 "send 'Authorization: Bearer <token>'; create one with `hermes-hub token create USER`"},
                                status_code=401, headers={"www-authenticate": 'Bearer realm="hermes-hub"'})
        return viewer

    async def metrics(request: Request) -> Response:
        viewer = await viewer_or_refusal(request)
        if isinstance(viewer, Response):
            return viewer
        if not viewer.admin:
            return JSONResponse({"error": "forbidden", "error_description": "/metrics is for admins: use a token "
                                 "made with `hermes-hub token create NAME --role admin`"}, status_code=403)
        depths[:] = [await queue_depths(hub)]
        body = await anyio.to_thread.run_sync(hub.metrics.render)  # off the loop: it walks every series
        return Response(body, media_type=CONTENT_TYPE, headers={"cache-control": "no-store"})

    async def events(request: Request) -> Response:
        viewer = await viewer_or_refusal(request)
        if isinstance(viewer, Response):
            return viewer
        run, user = request.query_params.get("run"), request.query_params.get("user")
        if len(run or "") > MAX_FILTER or len(user or "") > MAX_FILTER:
            return JSONResponse({"error": "invalid_request", "error_description":
                                 f"run and user are at most {MAX_FILTER} characters"}, status_code=400)
        me = viewer.identity.user_id
        if not viewer.admin and user not in (None, me):
            return JSONResponse({"error": "forbidden", "error_description": f"you may follow your own events only "
                                 f"(user '{me}'); an admin token sees everyone's"}, status_code=403)
        wanted_user = user if viewer.admin else me

        def visible(event: Event) -> bool:
            return (wanted_user is None or event.user_id == wanted_user) and (run is None or event.run_id == run)

        kept = [e for e in hub.events.stream(run) if visible(e)] if run else []
        if request.query_params.get("follow") not in ("1", "true", "yes"):
            body = "".join(json.dumps(e.to_dict()) + "\n" for e in kept)
            return Response(body, media_type="application/x-ndjson", headers={"cache-control": "no-store"})
        return followers.stream(me, hub.config.hub.max_followers, _follow(hub, kept, visible, me),
                                {"cache-control": "no-store", "x-accel-buffering": "no"})

    return [Route("/metrics", metrics), Route("/events", events)]


async def _follow(hub: Hub, kept: list[Event], visible: object, me: str) -> AsyncIterator[str]:
    with hub.events.subscribe(f"events:{me}", accept=visible) as live:  # type: ignore[arg-type]
        yield ": following\n\n"
        last = 0
        for event in kept:
            last = event.seq
            yield f"id: {event.seq}\ndata: {json.dumps(event.to_dict())}\n\n"
        async for event in live.beats(HEARTBEAT):
            if event is None:
                yield ": quiet\n\n"
            elif event.seq > last:
                yield f"id: {event.seq}\ndata: {json.dumps(event.to_dict())}\n\n"
