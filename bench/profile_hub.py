"""Where does a proxied call spend its time? CPU accounting plus a py-spy profile of the hub process.

    python -m bench.profile_hub                          # hub over stdio, echo downstream over stdio
    python -m bench.profile_hub --transport http         # hub over HTTP, echo downstream over HTTP
    python -m bench.profile_hub --concurrency 32 --seconds 15

1. CPU per call (from /proc/PID/stat) of the benchmark client, the echo server and the hub, for
   direct calls and calls through the hub: the hub's extra CPU is what it adds to a call.
2. If ``py-spy`` is installed (``pip install py-spy``; not a project dependency), a GIL-holding
   sampling profile of the hub process under the same load, each sample attributed to the
   innermost frame of a known layer (hub code, SDK server, SDK client, transports...), plus the
   hottest hermes_hub lines. The raw collapsed stacks are kept in bench/results/.

Linux only (reads /proc). Every process is killed on exit; every wait is bounded.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TextIO

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from bench.proxy import (
    DIRECT_TOOL,
    HUB_TOOL,
    RESULTS,
    STARTUP_TIMEOUT,
    TEXT,
    _hub_ready,
    echo_stdio_entry,
    free_port,
    http_process,
    hub_downstream,
    kill_leftovers,
    stdio_params,
    table,
    write_hub_config,
)

TICK = os.sysconf("SC_CLK_TCK")
RATE = 1000  # py-spy samples per second

# (layer, pattern on a "function (file:line)" frame). The innermost frame matching any pattern
# decides a sample's layer; generic libraries (pydantic, jsonschema, h11, asyncio, anyio) are
# deliberately absent so their time lands on the code that called them.
LAYERS = [
    ("hub: argument check (jsonschema)", r"hermes_hub/core/aggregation/arguments\.py"),
    ("hub: fit_result / result size", r"hermes_hub/core/aggregation/truncation\.py"),
    ("hub: downstream stdio pumps (parse/dump/pipe)", r"hermes_hub/downstream/transports\.py"),
    ("hub: catalog, connection, handler", r"hermes_hub/(?!cli\.py|__main__\.py)"),
    ("SDK client: HTTP transport (httpx2)", r"mcp/client/streamable_http\.py|httpx2/|httpcore/"),
    ("SDK client: Client/ClientSession (send, result validation)", r"mcp/client/"),
    ("SDK server: stdio_server (a worker-thread hop per readline/write/flush, loop wake-ups)",
     (r"mcp/server/stdio\.py|WorkerThread|run_sync_in_worker_thread|to_thread\.py|CapacityLimiter|Queue\.put"
      r"|_read_from_self|_write_to_self|call_soon_threadsafe")),
    ("SDK server: streamable HTTP transport", r"mcp/server/(streamable_http|_streamable_http)"),
    ("HTTP server: uvicorn / starlette", r"uvicorn/|starlette/"),
    ("SDK server: dispatcher, runner, OTel middleware", r"mcp/server/|mcp/shared/|mcp_types/|opentelemetry|use_span|NoOpTracer"),
]
_LAYER_RES = [(name, re.compile(p)) for name, p in LAYERS]
OTHER = "event loop, scheduling, other"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def child_pids(pid: int) -> set[int]:
    out: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        out |= {int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()}
    return out


async def drive(client: Client, tool: str, concurrency: int, *, calls: int | None = None,
                seconds: float | None = None) -> int:
    done = 0
    stop = time.perf_counter() + seconds if seconds else None

    async def worker(n: int | None) -> None:
        nonlocal done
        while (n is None or n > 0) and (stop is None or time.perf_counter() < stop):
            await client.call_tool(tool, {"text": TEXT})
            done += 1
            n = None if n is None else n - 1

    async with anyio.create_task_group() as tg:
        for i in range(concurrency):
            share = None if calls is None else calls // concurrency + (i < calls % concurrency)
            tg.start_soon(worker, share)
    return done


async def cpu_per_call(client: Client, tool: str, pids: dict[str, int], calls: int, concurrency: int,
                       ) -> dict[str, float]:
    await drive(client, tool, concurrency, calls=max(50, calls // 10))  # warm-up
    before = {k: cpu_seconds(p) for k, p in pids.items()}
    me, t0 = time.process_time(), time.perf_counter()
    n = await drive(client, tool, concurrency, calls=calls)
    out = {"wall": (time.perf_counter() - t0) / n * 1e3, "bench client": (time.process_time() - me) / n * 1e3}
    out |= {k: (cpu_seconds(p) - before[k]) / n * 1e3 for k, p in pids.items()}
    return out


def attribute(raw: Path) -> tuple[collections.Counter[str], collections.Counter[str], collections.Counter[str], int]:
    layers: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    hub_lines: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        total += n
        leaves[frames[-1]] += n
        layer = OTHER
        for frame in reversed(frames):
            hit = next((name for name, rx in _LAYER_RES if rx.search(frame)), None)
            if hit:
                layer = hit
                break
        layers[layer] += n
        for frame in {f for f in frames if "hermes_hub/" in f and "cli.py" not in f and "__main__" not in f}:
            hub_lines[frame] += n
    return layers, leaves, hub_lines, total


async def py_spy(pid: int, seconds: float, out: Path, client: Client, concurrency: int) -> int:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    proc = await anyio.open_process(
        [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", str(RATE), "--gil", "--nonblocking",
         "-f", "raw", "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await anyio.sleep(0.5)  # let py-spy attach
        n = await drive(client, HUB_TOOL, concurrency, seconds=seconds + 1)
        with anyio.fail_after(15):
            await proc.wait()
        if proc.returncode != 0 or not out.exists():
            err = (await proc.stderr.receive()).decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"py-spy failed ({proc.returncode}): {err.strip()[:300]} (ptrace allowed? root?)")
        return n
    finally:
        if proc.returncode is None:
            proc.kill()
            with anyio.move_on_after(3):
                await proc.wait()


def report(title: str, cpu: dict[str, dict[str, float]], prof: tuple | None, calls: int, out: TextIO) -> None:
    print(f"\n== {title}", file=out)
    keys = ["wall", "bench client", "echo", "hub"]
    rows = [[route, *(f"{cpu[route][k]:.3f}" if k in cpu[route] else "-" for k in keys)] for route in cpu]
    print(table(["route", "wall ms/call", "client cpu ms", "echo cpu ms", "hub cpu ms"], rows), file=out)
    if prof is None:
        print("(py-spy not installed: `pip install py-spy` for the per-layer breakdown)", file=out)
        return
    layers, leaves, hub_lines, total = prof
    hub_cpu = cpu["hub"]["hub"]
    print(f"\nhub process, py-spy --gil at {RATE} Hz: {total} samples over {calls} calls; ms/call = share x "
          f"measured hub CPU ({hub_cpu:.3f} ms/call)", file=out)
    rows = [[name, f"{100 * n / total:.1f}%", f"{hub_cpu * n / total:.3f}"] for name, n in layers.most_common()]
    print(table(["layer (innermost matching frame)", "share", "ms/call"], rows), file=out)
    print("\nhottest leaf frames (self time):", file=out)
    print(table(["frame", "share"], [[f[:110], f"{100 * n / total:.1f}%"] for f, n in leaves.most_common(12)]),
          file=out)
    print("\nhermes_hub lines on the stack (inclusive):", file=out)
    print(table(["frame", "share"], [[f[:110], f"{100 * n / total:.1f}%"] for f, n in hub_lines.most_common(15)]),
          file=out)


async def run(transport: str, seconds: float, concurrency: int, calls: int, out: TextIO = sys.stdout) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    have_spy = shutil.which("py-spy") or (Path(sys.executable).parent / "py-spy").exists()
    raw = RESULTS / f"profile-hub-{transport}-c{concurrency}.txt"
    leftovers: list[int] = []
    with tempfile.TemporaryDirectory(prefix="hermes-prof-") as tmp, open(RESULTS / "profile-processes.log", "w") as log:
        os.environ["HERMES_DATA_DIR"] = str(Path(tmp) / "data")  # never the user's hub.db
        try:
            with anyio.fail_after(STARTUP_TIMEOUT + 4 * seconds + 120):
                async with AsyncExitStack() as stack:
                    cpu: dict[str, dict[str, float]] = {}
                    py = sys.executable
                    if transport == "stdio":
                        before = child_pids(os.getpid())
                        direct = await stack.enter_async_context(
                            Client(stdio_client(stdio_params(["-m", "bench.echo_server"]), errlog=log)))
                        (echo_pid,) = child_pids(os.getpid()) - before
                        cfg = write_hub_config(Path(tmp), "hub", echo_stdio_entry())
                        hub = await stack.enter_async_context(Client(stdio_client(
                            stdio_params(["-m", "hermes_hub", "serve", "--stdio", "-q", "--config", str(cfg)]),
                            errlog=log)))
                        _, pids = await hub_downstream(hub)
                        leftovers += pids
                        hub_echo, hub_pid = pids[0], parent_pid(pids[0])
                    else:
                        echo_port, hub_port = free_port(), free_port()
                        echo_url = f"http://127.0.0.1:{echo_port}/mcp"
                        echo_proc = await stack.enter_async_context(http_process(
                            [py, "-m", "bench.echo_server", "--http", str(echo_port)], echo_url,
                            lambda r: r.status_code < 500, "echo server (HTTP)", log))
                        cfg = write_hub_config(Path(tmp), "hub", {"url": echo_url})
                        hub_proc = await stack.enter_async_context(http_process(
                            [py, "-m", "hermes_hub", "serve", "-q", "--config", str(cfg), "--port", str(hub_port)],
                            f"http://127.0.0.1:{hub_port}/readyz", _hub_ready, "hub (HTTP)", log))
                        direct = await stack.enter_async_context(Client(echo_url))
                        hub = await stack.enter_async_context(Client(f"http://127.0.0.1:{hub_port}/mcp"))
                        await hub_downstream(hub)
                        echo_pid = hub_echo = echo_proc.pid
                        hub_pid = hub_proc.pid
                    cpu["direct"] = await cpu_per_call(direct, DIRECT_TOOL, {"echo": echo_pid}, calls, concurrency)
                    cpu["hub"] = await cpu_per_call(hub, HUB_TOOL, {"echo": hub_echo, "hub": hub_pid}, calls,
                                                    concurrency)
                    prof, n = None, 0
                    if have_spy:
                        n = await py_spy(hub_pid, seconds, raw, hub, concurrency)
                        prof = attribute(raw)
        finally:
            kill_leftovers(leftovers)
    report(f"hub over {transport}, echo downstream over {transport}, {concurrency} call(s) in flight on one "
           f"connection", cpu, prof, n, out)
    if prof:
        print(f"\nraw stacks: {raw.relative_to(RESULTS.parent.parent)}", file=out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.profile_hub", description=__doc__.split("\n\n")[0])
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--seconds", type=float, default=10.0, help="py-spy sampling time")
    p.add_argument("--concurrency", type=int, default=1, help="calls in flight on the one connection")
    p.add_argument("--calls", type=int, default=1000, help="calls for the CPU accounting")
    args = p.parse_args(argv)
    anyio.run(run, args.transport, args.seconds, args.concurrency, args.calls)


if __name__ == "__main__":
    main()
