"""Scheduler benchmark (issue 24): what 10,000 schedules cost the firing loop, and how late a burst of due
runs starts against its due time.

    python -m bench.schedules [--quick]

One SQLite store per route, the real clock, the hub's ``Scheduler`` with a run that returns at once (the
agent's own cost is the agent benchmark's), jitter 0. Each route holds ``total`` schedules, of which
``burst`` one-offs fall due spread over ``SPREAD`` seconds (the rest are due tomorrow). Measured in the same
run: the **baseline** (only the burst: ``burst`` schedules) and **10,000 schedules**.

Printed per route: the cost of an idle look (plan + claim finding nothing), and the fire latency p50/p99
(seconds from each run's due time to its start); then the ratios of 10,000 over the baseline.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import anyio

from bench import run_alone
from hermes_hub.infra.config.sections import SchedulesSection
from hermes_hub.core.schedules import Clock, Inbox, Scheduler
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.timetable import ScheduleRecord

RESULTS = Path(__file__).resolve().parent / "results"
SPREAD = 2.0  # seconds over which the burst falls due
LEAD = 3.0  # seconds from the end of setup to the first due time
IDLE_LOOKS = 50


async def _done(store: Any, owner: str, burst: int) -> bool:
    counts = await store.schedule_counts()
    return counts.get("occurrences_done", 0) >= burst


async def route(tmp: Path, name: str, total: int, burst: int) -> dict[str, Any]:
    async with open_store(f"sqlite:///{tmp / name}.db") as store:
        now = time.time()
        records = []
        for i in range(total):  # all due tomorrow first: inserting 10,000 takes a while on a busy machine
            due = now + 86_400 + i
            spec = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(due))
            records.append(ScheduleRecord(f"sch_{i:06d}", f"user{i % 50}", "user", f"task {i}", "at", spec, "UTC",
                                          "default", None, None, 0.0, 0, None, "active", due, now, now))
            await store.add_schedule(records[-1])
        start = time.time() + LEAD
        for i, r in enumerate(records[:burst]):  # then the burst, due from LEAD seconds on
            due = start + SPREAD * i / burst
            spec = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(due))
            await store.update_schedule(ScheduleRecord(**{**r.__dict__, "spec": spec, "next_due": due}))

        async def fire(s: Any, o: Any) -> dict[str, Any]:
            return {"answer": "ok", "stop_reason": "answered"}

        settings = SchedulesSection(jitter=0)
        scheduler = Scheduler(store, Clock(), fire, settings=lambda: settings, inbox=Inbox())
        looks = []
        for _ in range(IDLE_LOOKS):  # nothing is due yet: what every idle look costs
            t0 = time.perf_counter()
            await scheduler.step()
            looks.append((time.perf_counter() - t0) * 1000)
        async with anyio.create_task_group() as tg:
            tg.start_soon(scheduler.run)
            with anyio.fail_after(LEAD + SPREAD + 600):
                while not await _done(store, scheduler.owner, burst):
                    await anyio.sleep(0.05)  # polling the bench's own progress, not a test's state
            tg.cancel_scope.cancel()
        lat = sorted(scheduler.latency)
        return {"schedules": total, "burst": burst, "idle_look_ms": round(statistics.median(looks), 3),
                "fire_p50_s": round(lat[len(lat) // 2], 4), "fire_p99_s": round(lat[int(len(lat) * 0.99) - 1], 4),
                "fired": len(lat)}


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    started = time.perf_counter()
    total, burst = (2_000, 50) if quick else (10_000, 200)
    with tempfile.TemporaryDirectory() as d:
        rows = {"baseline": await route(Path(d), "baseline", burst, burst),
                f"{total:,} schedules": await route(Path(d), "many", total, burst)}
    base, many = rows["baseline"], rows[f"{total:,} schedules"]
    doc = {"benchmark": "schedules", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "cpus": os.cpu_count(), "loadavg": list(os.getloadavg()), "spread_s": SPREAD, "routes": rows,
           "ratios": {k: round(many[k] / base[k], 3) if base[k] else None
                      for k in ("idle_look_ms", "fire_p50_s", "fire_p99_s")},
           "seconds": round(time.perf_counter() - started, 1)}
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "schedules.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def render(doc: dict[str, Any]) -> str:
    lines = ["| route | schedules | due in the burst | idle look | fire latency p50 | p99 |", "|---|---|---|---|---|---|"]
    for name, r in doc["routes"].items():
        lines.append(f"| {name} | {r['schedules']:,} | {r['burst']} | {r['idle_look_ms']:.2f} ms | "
                     f"{r['fire_p50_s'] * 1000:.0f} ms | {r['fire_p99_s'] * 1000:.0f} ms |")
    ratios = doc["ratios"]
    lines.append("\n10,000 / baseline (same run): " + ", ".join(f"{k} x{v}" for k, v in ratios.items()))
    return "\n".join(lines)


def main() -> None:
    run_alone("schedules", run, __doc__)


if __name__ == "__main__":
    main()
