"""What the status page shows one viewer: the same data as ``/status.json``.

Servers are those the viewer may use (``Hub.report(viewer)``, the words of ``hermes-hub servers``) with
each one's public tools and activity; calls and agent runs are the viewer's own (an admin sees everyone's
calls); memory counts are the viewer's own. Servers' errors, pids, exit codes and stderr, and the
background queues, are shown to admins only (``hermes_hub.app.hub.status``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hermes_hub.services import audit
from hermes_hub.core.agent.runs import run_summary, run_trace
from hermes_hub.infra.call import Identity
from hermes_hub.infra.storage.records import utcnow
from hermes_hub.core.toolsets.tokens import listing_tokens
from hermes_hub.app.web.activity import MINUTES, per_server

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

CALLS_SHOWN = 50
RUNS_SHOWN = 20
ACTIVITY_ROWS = 20000  # an hour of calls read for the sparklines; past that the oldest minutes undercount
RED = {"DEGRADED", "RESTARTING", "CRASH_LOOP", "FAILED", "STOPPED"}
OUTCOMES = ("ok", "tool_error", "error", "timeout", "refused")


def colour(state: str) -> str:
    """The state's colour class: green READY, amber STARTING, grey DISABLED, red for anything broken."""
    return {"READY": "green", "STARTING": "amber", "DISABLED": "grey"}.get(state, "red" if state in RED else "amber")


def _tools_of(hub: Hub, source: Any, viewer: Identity) -> tuple[list[dict[str, str]], int]:
    """The public tools ``source`` offers ``viewer``, with descriptions, and their schema cost in tokens."""
    items = [e.item for e in hub.catalog.tools.values() if e.mount.source is source and e.mount.offers(e.original, viewer)]
    return [{"name": t.name, "description": t.description or ""} for t in items], listing_tokens(items)


async def view(hub: Hub, viewer: Identity, *, tool: str | None = None, outcome: str | None = None) -> dict[str, Any]:
    """Everything the page shows ``viewer``; ``tool`` and ``outcome`` filter the recent calls."""
    report = await hub.report(viewer)  # the servers, tools and counts this viewer may see
    store = await hub.audited_store()  # flushed: the viewer's last call is there
    now = utcnow()
    who = None if viewer.is_admin else viewer.user_id
    hour = await store.query_audit(user_id=who, since=now - timedelta(minutes=MINUTES), limit=ACTIVITY_ROWS)
    activity = per_server(hour, now)
    for s in report["servers"]:
        s["colour"] = colour(s["state"])
        conn = hub.pool.connections.get(s["name"])
        s["tool_list"], s["schema_tokens"] = _tools_of(hub, conn, viewer) if conn is not None else ([], 0)
        s["activity"] = activity.get(s["name"], None)
    builtin_tools, builtin_tokens = _tools_of(hub, hub.builtins, viewer)
    report["builtins"] = {"name": hub.builtins.name, "tool_list": builtin_tools, "schema_tokens": builtin_tokens,
                          "activity": activity.get(hub.builtins.name)}
    rows = await audit.query(store, viewer.user_id, admin=viewer.is_admin, tool=tool or None,
                             limit=1000 if outcome else CALLS_SHOWN)
    calls = [r for r in rows if not outcome or r.outcome == outcome][:CALLS_SHOWN]
    runs = await store.list_runs(viewer.user_id, limit=RUNS_SHOWN)
    mine = await store.list_schedules(who, limit=RUNS_SHOWN)  # issue 24: an admin sees everyone's
    return {
        "schedules": [{**await hub.scheduling.book.view(s), "user": s.user_id} for s in mine],
        "viewer": {"user": viewer.user_id, "admin": viewer.is_admin},
        "generated_at": now.isoformat(),
        **report,
        "calls": {"scope": "everyone" if viewer.is_admin else "yours", "tool": tool, "outcome": outcome,
                  "rows": [{"at": r.at.isoformat(), "user": r.user_id, "tool": r.tool, "server": r.server,
                            "outcome": r.outcome, "duration_ms": round(r.duration_ms, 1), "error": r.error,
                            "run_id": r.run_id} for r in calls]},
        "runs": [{**run_summary(r), "input_tokens": r.input_tokens, "output_tokens": r.output_tokens} for r in runs],
    }


async def trace(hub: Hub, viewer: Identity, run_id: str) -> dict[str, Any]:
    """One of the viewer's runs with its events grouped by round (``NotFound`` for anyone else's)."""
    store = await hub.audited_store()
    found = run_trace(await store.get_run(viewer.user_id, run_id))
    rounds: dict[int, list[dict[str, Any]]] = {}
    for event in found["events"]:
        rounds.setdefault(event.get("round", 0), []).append(event)
    found["by_round"] = [{"round": n, "events": rounds[n]} for n in sorted(rounds)]
    return found


def as_json(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each server's activity as plain lists (the page draws them as SVG instead)."""
    out = dict(data)
    out["servers"] = [{**s, "activity": s["activity"].as_dict() if s.get("activity") else None}
                      for s in data["servers"]]
    b = data["builtins"]
    out["builtins"] = {**b, "activity": b["activity"].as_dict() if b.get("activity") else None}
    return out
