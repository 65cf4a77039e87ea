"""Supervision benchmark (issue 3): how soon a killed child is back, and whether servers start together.

    python -m bench.supervision [--quick]        (also: python -m bench supervision)

Everything runs through the hub's own ``Pool`` (what ``hermes-hub serve`` runs), in this process,
with real child processes over stdio.

* restart: one ``bench.echo_server`` child; once READY it is SIGKILLed and the time until it is READY
  again (new process, handshake, full listing) is taken, split into detection (kill -> the server
  leaves READY), the backoff wait, and the rest. A fresh pool per run, so every kill is a *first*
  restart (later quick ones back off longer, by design). With ``backoff_initial`` at its default (1 s)
  and at 0.05 s. Target: kill -> READY <= 1.5 s + backoff_initial. The cold start (pool start -> READY)
  of the same server in the same run is printed beside it.
* start-up: ten stdio servers in one pool; time to all READY / the slowest of the ten started alone
  (target <= 1.3). Two kinds of server: ``bench.idle_server`` (standard library, waits 1 s before it
  answers, like a server fetching a package: start-up is waiting, not CPU) and ``bench.echo_server`` (an
  ``MCPServer``; start-up is ~0.8 s of CPU importing ``mcp``, so ten of them compete for the cores). The
  same start-ups without the hub (ten SDK ``Client``s at once) give the machine's own ratio.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client, StdioServerParameters

from bench.proxy import table
from hermes_hub.infra.config import parse_config
from hermes_hub.downstream import Pool

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
ECHO = ["-m", "bench.echo_server"]
IDLE = ["-m", "bench.idle_server", "--start-delay", "1"]
KINDS = {"idle (stdlib, waits 1 s)": (IDLE, "legacy"), "echo (MCPServer, CPU-bound start)": (ECHO, "auto")}
TARGET_RESTART_OVERHEAD = 1.5  # seconds beyond backoff_initial
TARGET_TOGETHER_RATIO = 1.3
WAIT = 60.0  # bound of every wait for a state; a miss is a crash, not a slow result


def _entry(args: list[str], mode: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": args, "cwd": str(ROOT), "mode": mode, **extra}


# -- restart after SIGKILL --------------------------------------------------------------------------


async def _first_restart(backoff: float) -> dict[str, float]:
    entry = _entry(ECHO, "auto", backoff_initial=backoff, backoff_max=max(60.0, backoff))
    marks: list[tuple[str, float]] = []
    started = time.monotonic()
    async with Pool(parse_config({"mcpServers": {"echo": entry}}),
                    on_change=lambda c: marks.append((c.state.value, time.monotonic()))) as pool:
        conn = pool.connections["echo"]
        with anyio.fail_after(WAIT):
            await pool.wait_for(lambda: conn.ready)
        cold = time.monotonic() - started
        pid = conn.link.pid
        assert pid is not None
        marks.clear()
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(WAIT + backoff):
            await pool.wait_for(lambda: conn.ready and conn.link.pid != pid)
        back = time.monotonic()
    left = next(t for s, t in marks if s != "READY")
    retried = next(t for s, t in marks if s == "STARTING")
    return {"cold_s": cold, "detect_s": left - killed, "waited_s": retried - left, "after_wait_s": back - retried,
            "total_s": back - killed}


async def bench_restart(backoffs: list[float], runs: int, out: TextIO) -> list[dict[str, Any]]:
    rows = []
    for backoff in backoffs:
        samples = []
        for _ in range(runs):
            samples.append(await _first_restart(backoff))
        med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        overhead = med["total_s"] - backoff
        rows.append({"backoff_initial": backoff, "runs": runs, **{k: round(v, 3) for k, v in med.items()},
                     "total_max_s": round(max(s["total_s"] for s in samples), 3),
                     "overhead_s": round(overhead, 3), "met": overhead <= TARGET_RESTART_OVERHEAD})
        print(f"  restart, backoff_initial {backoff:g} s: {med['total_s']:.2f} s", file=out, flush=True)
    return rows


# -- ten servers started together -------------------------------------------------------------------


async def _hub_ready(entries: dict[str, dict[str, Any]]) -> float:
    started = time.monotonic()
    async with Pool(parse_config({"mcpServers": entries})) as pool:
        with anyio.fail_after(WAIT):
            await pool.wait_for(lambda: all(c.ready for c in pool.connections.values()))
        return time.monotonic() - started


async def _direct_ready(args: list[str], mode: str, n: int) -> float:
    """``n`` SDK Clients at once, each connected and its tools listed: the same work without the hub."""
    started, ready, all_in = time.monotonic(), [0], anyio.Event()
    took: list[float] = []

    async def one() -> None:
        params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT))
        async with Client(params, mode=mode) as client:
            await client.list_tools()
            ready[0] += 1
            if ready[0] == n:
                took.append(time.monotonic() - started)
                all_in.set()
            await all_in.wait()  # keep every child alive until the last is in, as the hub does

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(one)
    return took[0]


async def bench_together(n: int, alone: int, rounds: int, out: TextIO) -> list[dict[str, Any]]:
    rows = []
    for kind, (args, mode) in KINDS.items():
        for route in ("hub", "direct"):
            solos, togethers = [], []
            for _ in range(rounds):  # alternate the alone runs and the together run
                for i in range(alone):
                    solos.append((len(togethers), await (
                        _hub_ready({f"s{i}": _entry(args, mode)}) if route == "hub" else _direct_ready(args, mode, 1))))
                togethers.append(await (_hub_ready({f"s{i}": _entry(args, mode) for i in range(n)})
                                        if route == "hub" else _direct_ready(args, mode, n)))
            slowest = statistics.median(max(t for r, t in solos if r == k) for k in range(rounds))
            median_alone = statistics.median(t for _, t in solos)
            together = statistics.median(togethers)
            rows.append({"server": kind, "route": route, "servers": n, "alone_runs": alone * rounds, "rounds": rounds,
                         "slowest_alone_s": round(slowest, 3), "median_alone_s": round(median_alone, 3),
                         "together_s": round(together, 3), "ratio": round(together / slowest, 3),
                         "ratio_vs_median": round(together / median_alone, 3),
                         "met": together / slowest <= TARGET_TOGETHER_RATIO if route == "hub" else None})
            print(f"  {n} together, {kind}, {route}: {together:.2f} s", file=out, flush=True)
    return rows


# -- report -----------------------------------------------------------------------------------------


def render(doc: dict[str, Any]) -> str:
    restart = [[f"{r['backoff_initial']:g} s", f"{r['detect_s']:.3f}", f"{r['waited_s']:.3f}", f"{r['after_wait_s']:.3f}",
                f"{r['total_s']:.3f}", f"{r['total_max_s']:.3f}", f"{r['overhead_s']:.3f}", f"{r['cold_s']:.3f}",
                f"{r['overhead_s'] / r['cold_s']:.2f}", f"<= {TARGET_RESTART_OVERHEAD:g} + backoff",
                "PASS" if r["met"] else "MISS"] for r in doc["restart"]]
    out = [f"restart after SIGKILL: bench.echo_server over stdio, median of {doc['restart'][0]['runs']} first "
           f"restarts (fresh pool each)",
           table(["backoff_initial", "detect s", "backoff s", "start+list s", "kill->READY s", "max s",
                  "minus backoff s", "cold start s", "restart/cold ratio", "target", "result"], restart), ""]
    together = [[r["server"], r["route"], f"{r['slowest_alone_s']:.3f}", f"{r['median_alone_s']:.3f}",
                 f"{r['together_s']:.3f}", f"{r['ratio']:.2f}", f"{r['ratio_vs_median']:.2f}",
                 f"<= {TARGET_TOGETHER_RATIO:g}" if r["route"] == "hub" else "(machine floor)",
                 "" if r["met"] is None else "PASS" if r["met"] else "MISS"] for r in doc["together"]]
    first = doc["together"][0]
    out += [f"{first['servers']} stdio servers started together vs alone (median of {first['rounds']} rounds; "
            f"slowest of {first['alone_runs'] // first['rounds']} solo starts per round); READY = handshake + full "
            f"listing",
            table(["server", "route", "slowest alone s", "median alone s", "together s", "ratio", "ratio vs median",
                   "target", "result"], together)]
    m = doc["machine"]
    out.append(f"({m['cpus']} CPUs, load average {m['loadavg_before'][0]:.2f} before / "
               f"{m['loadavg_after'][0]:.2f} after; python {m['python']})")
    return "\n".join(out)


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    started, load_before = time.perf_counter(), os.getloadavg()
    print(f"supervision benchmark ({'quick' if quick else 'full'}) ...", file=out, flush=True)
    quiet = logging.getLogger("hermes_hub")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # every kill logs a RESTARTING warning: expected here
    try:
        restart = await bench_restart([1.0, 0.05], 2 if quick else 5, out)
        together = await bench_together(10, 3 if quick else 10, 1 if quick else 3, out)
    finally:
        quiet.setLevel(level)
    doc = {
        "benchmark": "supervision", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "loadavg_before": list(load_before), "loadavg_after": list(os.getloadavg())},
        "restart": restart, "together": together,
        "targets": {"restart_overhead_max_s": TARGET_RESTART_OVERHEAD, "together_ratio_max": TARGET_TOGETHER_RATIO},
    }
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "supervision.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.supervision", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and rounds")
    anyio.run(run, parser.parse_args(argv).quick)


if __name__ == "__main__":
    main()
