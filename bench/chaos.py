"""Chaos benchmark (issue 7): calls keep flowing while the downstream child is SIGKILLed again and again.

    python -m bench.chaos [--quick] [--seconds S] [--every S]     (also: python -m bench chaos)

A real ``hermes-hub serve`` process on a free port runs ``bench.echo_server`` as its stdio child.
8 clients (each its own HTTP ``Client``) call ``echo_echo`` in a loop for 20 s while the child is
SIGKILLed every 3 s; then the same load runs for the same time without kills, as the baseline.
Printed: calls, successes, failures (by kind), the slowest call, calls past their timeout, time from
each kill to READY again (p50 / max), whether the hub survived, and successes against the baseline.

Time to READY is seen from outside: ``/readyz`` polled every 10 ms after the kill until the server is
READY with a new pid (checked with ``hermes_hub_status``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from mcp import Client, MCPError

from bench.proxy import free_port, kill_leftovers, stop_process, table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
TOOL = "echo_echo"
SERVER_TIMEOUT = 5.0  # the echo server's ``timeout`` in the hub: no call may take longer (+ slack)
CALL_BOUND = SERVER_TIMEOUT + 5.0  # the client gives up here; such a call counts as past its timeout
WAIT = 60.0  # bound of every wait for a state; a miss is a crash of the benchmark
TARGET_READY_S = 1.5
# A client's pause between calls. 50 ms gives ~100 calls/s from 8 clients, the load of the issue's
# measurement (1,823 calls in 20 s); at 10 ms the clients' own CPU and the hub's fast failures
# (~800/s) compete with the restarting child for the 2 cores, measured: READY p50 2.0 s vs 1.0 s.
PACE = 0.05


@dataclass
class Phase:
    name: str
    seconds: float
    calls: int = 0
    ok: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    unclear: list[str] = field(default_factory=list)  # failures that name neither the server nor a state
    slowest_s: float = 0.0
    past_timeout: int = 0
    kills: int = 0
    skipped_ticks: int = 0  # the child was not READY when its kill was due
    ready_after_kill_s: list[float] = field(default_factory=list)
    hub_alive: bool = True


def _kind(text: str) -> str | None:
    """What a failed call said, or None when the message is not clear about the server and its state."""
    if "server 'echo'" not in text:
        return None
    if "is not ready (state " in text:
        return "not ready (" + text.split("(state ", 1)[1].split(")", 1)[0].split(",")[0] + ")"
    if "connection lost" in text:
        return "connection lost"
    return "other, naming the server"


async def _caller(client: Client, n: int, phase: Phase, stop: anyio.Event, pace: float) -> None:
    i = 0
    while not stop.is_set():
        i += 1
        text = f"{n}-{i}"
        started = time.monotonic()
        outcome: str | None
        with anyio.move_on_after(CALL_BOUND) as bound:
            try:
                r = await client.call_tool(TOOL, {"text": text})
            except MCPError as e:
                outcome = _kind(e.message)
                detail = e.message
            else:
                detail = r.content[0].text if r.content else repr(r)
                outcome = "ok" if not r.is_error and detail == text else _kind(detail)
        took = time.monotonic() - started
        phase.calls += 1
        phase.slowest_s = max(phase.slowest_s, took)
        if bound.cancelled_caught or took > SERVER_TIMEOUT + 1.0:
            phase.past_timeout += 1
            continue
        if outcome == "ok":
            phase.ok += 1
        else:
            phase.failures[outcome or "unclear"] += 1
            if outcome is None and len(phase.unclear) < 5:
                phase.unclear.append(detail[:300])
        await anyio.sleep(pace)  # a host thinks between calls; also keeps failed calls from spinning


async def _status(client: Client) -> dict[str, Any]:
    r = await client.call_tool("hermes_hub_status", {})
    return next(s for s in (r.structured_content or {})["servers"] if s["name"] == "echo")


async def _ready_again(http: httpx2.AsyncClient, base: str, watcher: Client, old_pid: int) -> None:
    while True:
        r = await http.get(f"{base}/readyz")
        echo = next(s for s in r.json()["servers"] if s["name"] == "echo")
        if echo["state"] == "READY" and (await _status(watcher))["pid"] != old_pid:
            return
        await anyio.sleep(0.01)  # poll interval only; bounded by the caller


async def _killer(phase: Phase, every: float, base: str, watcher: Client, stop: anyio.Event) -> None:
    """Every ``every`` seconds on the clock, SIGKILL the child if it is READY (else skip that tick)."""
    async with httpx2.AsyncClient(timeout=5) as http, anyio.create_task_group() as tg:
        tick = time.monotonic()
        while True:
            tick += every
            with anyio.move_on_after(max(0.0, tick - time.monotonic())):
                await stop.wait()
            if stop.is_set():
                return
            status = await _status(watcher)
            if status["state"] != "READY" or status["pid"] is None:
                phase.skipped_ticks += 1
                continue
            os.kill(status["pid"], signal.SIGKILL)
            phase.kills += 1
            tg.start_soon(_time_to_ready, phase, http, base, watcher, status["pid"], time.monotonic())


async def _time_to_ready(phase: Phase, http: httpx2.AsyncClient, base: str, watcher: Client, pid: int,
                         killed: float) -> None:
    with anyio.fail_after(WAIT):
        await _ready_again(http, base, watcher, pid)
    phase.ready_after_kill_s.append(time.monotonic() - killed)


async def run_phase(name: str, base: str, seconds: float, every: float | None, clients: int, pace: float,
                    hub: Process) -> Phase:
    phase = Phase(name, seconds)
    stop = anyio.Event()
    async with AsyncExitStack() as stack:
        conns = [await stack.enter_async_context(Client(f"{base}/mcp")) for _ in range(clients + 1)]
        watcher, callers = conns[0], conns[1:]
        async with anyio.create_task_group() as tg:
            for n, c in enumerate(callers):
                tg.start_soon(_caller, c, n, phase, stop, pace)
            if every is not None:
                tg.start_soon(_killer, phase, every, base, watcher, stop)
            await anyio.sleep(seconds)  # the phase's length: load runs meanwhile
            stop.set()
    phase.hub_alive = hub.returncode is None
    return phase


@asynccontextmanager
async def served_hub(tmp: Path, log: TextIO) -> AsyncIterator[tuple[str, Process]]:
    """``hermes-hub serve`` with one stdio echo child; yields its base URL once the child is READY."""
    config = {"mcpServers": {"echo": {"command": sys.executable, "args": ["-m", "bench.echo_server"],
                                      "cwd": str(ROOT), "timeout": SERVER_TIMEOUT}},
              "hub": {"name": "bench-chaos"}}
    (tmp / "hub.json").write_text(json.dumps(config))
    port = free_port()
    env = {**os.environ, "HERMES_DATA_DIR": str(tmp / "data")}  # never the user's own store
    proc = await anyio.open_process(
        [sys.executable, "-m", "hermes_hub", "serve", "--config", str(tmp / "hub.json"), "--port", str(port)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    children: list[int] = []
    try:
        async with httpx2.AsyncClient(timeout=2) as http:
            with anyio.fail_after(WAIT):
                while True:
                    if proc.returncode is not None:
                        raise RuntimeError(f"the hub exited with {proc.returncode}; see {log.name}")
                    try:
                        r = await http.get(f"{base}/readyz")
                        if r.status_code == 200 and r.json()["servers"][0]["state"] == "READY":
                            break
                    except httpx2.TransportError:
                        pass
                    await anyio.sleep(0.05)  # poll interval only; bounded above
        async with Client(f"{base}/mcp") as c:
            children.append((await _status(c))["pid"])
        yield base, proc
    finally:
        await stop_process(proc)
        kill_leftovers(children)


_READY_LINE = re.compile(r"READY: .* in ([0-9.]+)s \+ ([0-9.]+)s listing")


def restart_split(log: Path) -> dict[str, float]:
    """Where a restart's time went, from the hub's READY lines (the first, the cold start, skipped):
    spawn + interpreter start + handshake ("connect"), then the full listing."""
    found = [tuple(map(float, m.groups())) for m in map(_READY_LINE.search, log.read_text().splitlines()) if m][1:]
    if not found:
        return {}
    return {"restarts": len(found), "connect_p50_s": _p50([c for c, _ in found]),
            "connect_max_s": max(c for c, _ in found), "list_p50_s": _p50([x for _, x in found])}


def _p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def render(phases: list[Phase], doc: dict[str, Any]) -> str:
    rows = []
    for p in phases:
        rows.append([p.name, f"{p.seconds:g}", f"{p.kills} ({p.skipped_ticks})", str(p.calls), f"{p.calls / p.seconds:.0f}", str(p.ok), str(sum(p.failures.values())),
                     f"{p.ok / p.calls:.2f}" if p.calls else "-", f"{p.slowest_s:.2f}", str(p.past_timeout),
                     f"{_p50(p.ready_after_kill_s):.2f}" if p.ready_after_kill_s else "-",
                     f"{max(p.ready_after_kill_s):.2f}" if p.ready_after_kill_s else "-",
                     "yes" if p.hub_alive else "NO"])
    out = [table(["phase", "seconds", "kills (skipped)", "calls", "calls/s", "ok", "failed", "ok ratio", "slowest s", "past timeout",
                  "READY p50 s", "READY max s", "hub alive"], rows), ""]
    for p in phases:
        if p.failures:
            out.append(f"{p.name} failures: " + ", ".join(f"{k}: {v}" for k, v in p.failures.most_common()))
        for text in p.unclear:
            out.append(f"  unclear failure: {text}")
    v = doc["verdict"]
    if split := doc.get("restart_split"):
        out.append(f"restart split ({split['restarts']} restarts, hub log): spawn + start + handshake p50 "
                   f"{split['connect_p50_s']:.2f} s (max {split['connect_max_s']:.2f}), listing p50 "
                   f"{split['list_p50_s']:.3f} s; the rest of kill -> READY is detection, teardown and polling")
    out += [f"successes with kills / without: {v['ok_vs_baseline']:.2f}",
            f"READY after a kill: max {v['ready_max_s']:.2f} s (target <= {TARGET_READY_S:g} s: "
            f"{'PASS' if v['ready_met'] else 'MISS'}); calls past their timeout: {v['past_timeout']}; "
            f"hub crashed: {'no' if v['hub_alive'] else 'YES'}; unclear failures: {v['unclear']}",
            f"({doc['settings']['clients']} clients, {doc['settings']['pace_s'] * 1000:g} ms between a client's "
            f"calls; load average {doc['machine']['loadavg_before'][0]:.2f} before / "
            f"{doc['machine']['loadavg_after'][0]:.2f} after, {doc['machine']['cpus']} CPUs)"]
    return "\n".join(out)


async def run(quick: bool = False, out: TextIO = sys.stdout, seconds: float | None = None,
              every: float = 3.0, clients: int = 8, pace: float = PACE) -> dict[str, Any]:
    seconds = seconds or (8.0 if quick else 20.0)
    started, load_before = time.perf_counter(), os.getloadavg()
    print(f"chaos benchmark: {clients} clients for {seconds:g} s, SIGKILL every {every:g} s, then the same "
          f"without kills ...", file=out, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    phases = []
    with tempfile.TemporaryDirectory(prefix="hermes-chaos-") as tmp:
        for name, kill_every in (("kills", every), ("baseline", None)):
            work = Path(tmp) / name
            work.mkdir()
            with (RESULTS / f"chaos-hub-{name}.log").open("w") as log:
                async with served_hub(work, log) as (base, hub):
                    with anyio.fail_after(seconds + 2 * WAIT):
                        phases.append(await run_phase(name, base, seconds, kill_every, clients, pace, hub))
    kills, baseline = phases
    restarts = restart_split(RESULTS / "chaos-hub-kills.log")
    doc: dict[str, Any] = {
        "benchmark": "chaos", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "settings": {"seconds": seconds, "kill_every_s": every, "clients": clients, "pace_s": pace,
                     "server_timeout_s": SERVER_TIMEOUT},
        "machine": {"cpus": os.cpu_count(), "loadavg_before": list(load_before), "loadavg_after": list(os.getloadavg())},
        "phases": [asdict(p) | {"failures": dict(p.failures)} for p in phases],
        "verdict": {
            "ok_vs_baseline": kills.ok / baseline.ok if baseline.ok else float("nan"),
            "ready_p50_s": _p50(kills.ready_after_kill_s),
            "ready_max_s": max(kills.ready_after_kill_s, default=float("nan")),
            "ready_met": bool(kills.ready_after_kill_s) and max(kills.ready_after_kill_s) <= TARGET_READY_S,
            "past_timeout": kills.past_timeout + baseline.past_timeout,
            "hub_alive": kills.hub_alive and baseline.hub_alive,
            "unclear": kills.failures["unclear"] + baseline.failures["unclear"],
        },
        "restart_split": restarts,
    }
    doc["seconds"] = round(time.perf_counter() - started, 1)
    print(render(phases, doc), file=out)
    path = RESULTS / "chaos.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 s per phase instead of 20")
    parser.add_argument("--seconds", type=float, help="length of each phase")
    parser.add_argument("--every", type=float, default=3.0, help="seconds between kills (default 3)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--pace", type=float, default=PACE, help=f"seconds between a client's calls (default {PACE})")
    args = parser.parse_args(argv)
    anyio.run(lambda: run(args.quick, seconds=args.seconds, every=args.every, clients=args.clients, pace=args.pace))


if __name__ == "__main__":
    main()
