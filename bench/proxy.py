"""Proxy benchmark (issues 2 and 7): what does going through the hub cost on a trivial tool call,
and on listing 1,000 tools?

The same ``echo(text)`` tool (``bench/echo_server.py``) is called directly and through the hub, over
stdio and over streamable HTTP, sequentially and with 32 concurrent clients. Every process is real
(``python -m bench.echo_server``, ``python -m hermes_hub serve``), everything is on loopback. Over
stdio a third route, ``bench/floor_proxy.py``, shows what a pass-through without the SDK costs at
best. ``tools/list`` of 1,000 tools (an echo server with 999 filler tools) is timed direct vs
through the hub, for a 2026-07-28 host and a handshake-era host.

Fairness choices (also printed with the results):

* direct and hub connections of one transport are open at the same time and measured in
  alternating blocks (sequential) or rounds (concurrent), so machine noise hits both alike;
  connect, discovery and warm-up calls are never timed;
* stdio concurrency = ONE client connection with 32 calls in flight (32 tasks) to the same process,
  direct vs hub (32 stdio connections would mean 32 hub processes, each with its own echo child);
* HTTP concurrency = 32 ``Client`` connections (each its own HTTP client) to one server process,
  direct vs one hub process;
* over HTTP the hub's downstream is the *same* echo server process the direct cells use (HTTP),
  plus an extra row with a second hub whose downstream is an echo child over stdio;
* the ratios compare the hub against direct on the same transport, measured in the same run.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
TEXT = "hello, hub"
DIRECT_TOOL = "echo"
HUB_TOOL = "echo_echo"  # "{server key}_{tool}"

STARTUP_TIMEOUT = 30.0  # a process or connection must be up (and the hub's downstream READY) by then
CELL_TIMEOUT = 120.0  # one measured section (all its blocks/rounds)
SECTION_TIMEOUT = 150.0  # a whole transport section: start-up, connections, all cells, teardown
STOP_GRACE = 3.0  # SIGTERM -> SIGKILL

# Targets of issue 2 (informational: a miss never fails the process).
TARGET_P50_RATIO_STDIO = 1.8  # hub p50 / direct p50, sequential stdio
TARGET_THROUGHPUT_RATIO = 0.5  # hub calls/s / direct calls/s
TARGET_LIST_RATIO = 1.5  # hub p50 / direct p50 of tools/list with LIST_TOOLS tools (issue 7)
LIST_TOOLS = 1000  # echo + filler tools the list benchmark's downstream offers
FLOOR = "floor (raw line proxy)"  # bench/floor_proxy.py: no SDK, no checks; what a pass-through costs at best


@dataclass
class Settings:
    seq_calls: int = 300  # per route, timed
    seq_block: int = 25  # alternate routes every this many calls
    seq_warmup: int = 30
    clients: int = 32
    calls_per_client: int = 30  # per route, timed, split over `rounds`
    rounds: int = 6
    conc_warmup: int = 2  # per client / task
    list_calls: int = 40  # tools/list per route and era, timed
    list_block: int = 5

    @classmethod
    def quick(cls) -> Settings:
        return cls(seq_calls=60, seq_block=20, seq_warmup=10, clients=32, calls_per_client=6, rounds=2, conc_warmup=1,
                   list_calls=10, list_block=5)


@dataclass
class Cell:
    transport: str  # stdio | http
    load: str  # sequential | concurrent
    route: str  # direct | hub | hub (downstream stdio)
    calls: int
    p50_ms: float
    p99_ms: float
    mean_ms: float
    throughput: float  # calls/s
    wall_s: float
    errors: int
    protocol: str  # what the benchmark client negotiated with its peer
    downstream: str  # how the peer reaches the echo tool
    connections: int
    in_flight: int


@dataclass
class Route:
    """One way of reaching the echo tool: a ready connection (or 32) plus the tool's name there."""

    name: str
    tool: str
    protocol: str
    downstream: str
    clients: list[Client] = field(default_factory=list)


# -- statistics -------------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return math.nan
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


def make_cell(transport: str, load: str, route: Route, lat: list[float], wall: float, errors: int,
              connections: int, in_flight: int) -> Cell:
    s = sorted(lat)
    return Cell(
        transport=transport, load=load, route=route.name, calls=len(lat),
        p50_ms=round(statistics.median(s) * 1e3, 3) if s else math.nan,
        p99_ms=round(percentile(s, 99) * 1e3, 3),
        mean_ms=round(statistics.fmean(s) * 1e3, 3) if s else math.nan,
        throughput=round(len(lat) / wall, 1) if wall > 0 else math.nan,
        wall_s=round(wall, 3), errors=errors, protocol=route.protocol, downstream=route.downstream,
        connections=connections, in_flight=in_flight,
    )


# -- processes --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_leftovers(pids: list[int]) -> None:
    """Downstream children a hub started in their own process group: make sure none outlives it."""
    for pid in pids:
        if _alive(pid):
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


async def stop_process(proc: Process) -> None:
    with anyio.CancelScope(shield=True):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.returncode is not None:
                break
            try:
                os.killpg(proc.pid, sig)  # started with start_new_session: pgid == pid
            except (ProcessLookupError, PermissionError):
                pass
            with anyio.move_on_after(STOP_GRACE):
                await proc.wait()


async def _wait_http(url: str, ok: Callable[[httpx2.Response], bool], proc: Process, what: str) -> None:
    async with httpx2.AsyncClient(timeout=2.0) as http:
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"{what} exited with code {proc.returncode} before it was ready")
            try:
                if ok(await http.get(url)):
                    return
            except httpx2.TransportError:
                pass
            await anyio.sleep(0.05)


@asynccontextmanager
async def http_process(argv: list[str], ready_url: str, ok: Callable[[httpx2.Response], bool], what: str,
                       log: TextIO) -> AsyncIterator[Process]:
    """Start ``argv`` (own process group), wait until ``ready_url`` answers ``ok``, kill it on exit."""
    proc = await anyio.open_process(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)
    try:
        with anyio.fail_after(STARTUP_TIMEOUT):
            await _wait_http(ready_url, ok, proc, what)
        yield proc
    finally:
        await stop_process(proc)


def _hub_ready(r: httpx2.Response) -> bool:
    if r.status_code != 200:
        return False
    bad = [s for s in r.json()["servers"] if s["state"] != "READY"]
    if bad:
        raise RuntimeError(f"hub downstream not READY: {bad}")
    return True


# `--guards`: the hub under test masks every result with all six detectors and counts every call against
# a limit a minute and one at once (limits no bench call reaches), so the pipeline's steps all run
GUARDS = {"mask": {}, "limits": [{"name": "bench", "calls_per_minute": 10_000_000, "concurrent": 100_000}]}
WITH_GUARDS = False


def write_hub_config(tmp: Path, name: str, server: dict[str, Any]) -> Path:
    path = tmp / f"{name}.json"
    doc: dict[str, Any] = {"mcpServers": {"echo": server}, "hub": {"name": f"bench-{name}"}}
    if WITH_GUARDS:
        doc["guards"] = GUARDS
    path.write_text(json.dumps(doc))
    return path


def echo_stdio_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "bench.echo_server"], "cwd": str(ROOT)}


def stdio_params(args: list[str]) -> StdioServerParameters:
    # stdio children get only the SDK's env allow-list plus env=; the venv interpreter needs nothing more.
    env = {"PYTHONUNBUFFERED": "1"}
    if data := os.environ.get("HERMES_DATA_DIR"):  # a hub's audit rows go to the run's own dir (run())
        env["HERMES_DATA_DIR"] = data
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)


# -- connections ------------------------------------------------------------------------------


async def open_client(stack: AsyncExitStack, target: Any) -> Client:
    # Bounded by the caller's section deadline: a Client owns task groups, so a cancel scope
    # entered around its __aenter__ alone could not be exited while the Client stays open.
    return await stack.enter_async_context(Client(target))


async def hub_downstream(client: Client) -> tuple[str, list[int]]:
    """Wait until the hub lists the echo tool; return its downstream protocol and child pids."""
    with anyio.fail_after(STARTUP_TIMEOUT):
        while HUB_TOOL not in {t.name for t in (await client.list_tools()).tools}:
            await anyio.sleep(0.05)
    status = (await client.call_tool("hermes_hub_status", {})).structured_content or {}
    servers = status.get("servers", [])
    proto = ",".join(f"{s['transport']} {s.get('protocol_version')}" for s in servers)
    return proto, [s["pid"] for s in servers if s.get("pid")]


async def warm(client: Client, tool: str, n: int) -> None:
    for _ in range(n):
        await checked_call(client, tool)


async def checked_call(client: Client, tool: str) -> None:
    r = await client.call_tool(tool, {"text": TEXT})
    if r.is_error or not r.content or getattr(r.content[0], "text", None) != TEXT:
        raise RuntimeError(f"{tool}: unexpected result {r!r:.300}")


# -- load shapes ------------------------------------------------------------------------------


async def sequential(routes: list[Route], s: Settings, transport: str) -> list[Cell]:
    """One connection per route; ``seq_calls`` one-at-a-time calls, alternating routes every block."""
    lat: dict[str, list[float]] = {r.name: [] for r in routes}
    wall: dict[str, float] = {r.name: 0.0 for r in routes}
    for r in routes:
        await warm(r.clients[0], r.tool, s.seq_warmup)
    blocks = math.ceil(s.seq_calls / s.seq_block)
    with anyio.fail_after(CELL_TIMEOUT):
        for b in range(blocks):
            n = min(s.seq_block, s.seq_calls - b * s.seq_block)
            order = routes if b % 2 == 0 else routes[::-1]
            for r in order:
                client, out = r.clients[0], lat[r.name]
                t0 = time.perf_counter()
                for _ in range(n):
                    c0 = time.perf_counter()
                    await checked_call(client, r.tool)
                    out.append(time.perf_counter() - c0)
                wall[r.name] += time.perf_counter() - t0
    return [make_cell(transport, "sequential", r, lat[r.name], wall[r.name], 0, 1, 1) for r in routes]


async def concurrent(routes: list[Route], s: Settings, transport: str) -> list[Cell]:
    """``clients`` workers per route, all released at once; ``rounds`` rounds alternating routes.

    A worker uses ``route.clients[i % len(route.clients)]``: over HTTP that is its own connection,
    over stdio the single shared connection (so 32 calls are in flight on it).
    """
    per_round = [s.calls_per_client // s.rounds + (1 if i < s.calls_per_client % s.rounds else 0)
                 for i in range(s.rounds)]
    lat: dict[str, list[float]] = {r.name: [] for r in routes}
    wall: dict[str, float] = {r.name: 0.0 for r in routes}
    errors: dict[str, int] = {r.name: 0 for r in routes}

    async def run_round(r: Route, n: int, record: bool) -> None:
        out = lat[r.name]

        async def worker(i: int) -> None:
            client = r.clients[i % len(r.clients)]
            for _ in range(n):
                c0 = time.perf_counter()
                try:
                    await checked_call(client, r.tool)
                except Exception:  # counted and reported; the run goes on
                    if not record:
                        raise
                    errors[r.name] += 1
                    continue
                if record:
                    out.append(time.perf_counter() - c0)

        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(s.clients):
                tg.start_soon(worker, i)
        if record:
            wall[r.name] += time.perf_counter() - t0

    with anyio.fail_after(CELL_TIMEOUT):
        for r in routes:
            await run_round(r, s.conc_warmup, record=False)
        for k, n in enumerate(per_round):
            for r in (routes if k % 2 == 0 else routes[::-1]):
                await run_round(r, n, record=True)
    return [make_cell(transport, "concurrent", r, lat[r.name], wall[r.name], errors[r.name], len(r.clients),
                      s.clients) for r in routes]


async def listing(routes: list[Route], s: Settings, load: str) -> list[Cell]:
    """tools/list, one at a time, alternating routes every ``list_block`` calls; every request
    reaches the server (no client cache)."""
    lat: dict[str, list[float]] = {r.name: [] for r in routes}
    wall: dict[str, float] = {r.name: 0.0 for r in routes}

    async def list_once(r: Route) -> None:
        # The raw request (with the era's envelope) times the server and the wire, not the Python SDK
        # client's own validation of 1,000 tools, which costs as much again and is the same either way.
        session = r.clients[0].session
        data: dict[str, Any] = {"method": "tools/list", "params": {}}
        opts: dict[str, Any] = {}
        session._stamp(data, opts)  # type: ignore[attr-defined]  # private: the era's _meta envelope
        result = await session._dispatcher.send_raw_request("tools/list", data["params"], opts)  # type: ignore[attr-defined]
        if len(result.get("tools", [])) < LIST_TOOLS:
            raise RuntimeError(f"{r.name}: listed {len(result.get('tools', []))} tools, expected at least {LIST_TOOLS}")

    for r in routes:
        for _ in range(2):
            await list_once(r)
    with anyio.fail_after(CELL_TIMEOUT):
        for b in range(math.ceil(s.list_calls / s.list_block)):
            for r in (routes if b % 2 == 0 else routes[::-1]):
                t0 = time.perf_counter()
                for _ in range(min(s.list_block, s.list_calls - b * s.list_block)):
                    c0 = time.perf_counter()
                    await list_once(r)
                    lat[r.name].append(time.perf_counter() - c0)
                wall[r.name] += time.perf_counter() - t0
    return [make_cell("stdio", load, r, lat[r.name], wall[r.name], 0, 1, 1) for r in routes]


# -- the two transports ----------------------------------------------------------------------


async def bench_stdio(s: Settings, tmp: Path, log: TextIO) -> list[Cell]:
    leftovers: list[int] = []
    try:
        with anyio.fail_after(SECTION_TIMEOUT):
            return await _stdio_cells(s, tmp, log, leftovers)
    finally:
        kill_leftovers(leftovers)


async def bench_http(s: Settings, tmp: Path, log: TextIO) -> list[Cell]:
    leftovers: list[int] = []
    try:
        with anyio.fail_after(SECTION_TIMEOUT):
            return await _http_cells(s, tmp, log, leftovers)
    finally:
        kill_leftovers(leftovers)


async def bench_list(s: Settings, tmp: Path, log: TextIO) -> list[Cell]:
    """tools/list of LIST_TOOLS tools over stdio, direct vs through the hub, for a host of each era."""
    leftovers: list[int] = []
    echo = ["-m", "bench.echo_server", "--tools", str(LIST_TOOLS - 1)]
    hub_cfg = write_hub_config(tmp, "hub-list", {**echo_stdio_entry(), "args": echo})
    cells: list[Cell] = []
    try:
        with anyio.fail_after(SECTION_TIMEOUT):
            for era, mode in (("2026-07-28", "auto"), ("handshake", "legacy")):
                async with AsyncExitStack() as stack:
                    direct_c = await stack.enter_async_context(
                        Client(stdio_client(stdio_params(echo), errlog=log), mode=mode))
                    hub_c = await stack.enter_async_context(Client(stdio_client(stdio_params(
                        ["-m", "hermes_hub", "serve", "--stdio", "-q", "--config", str(hub_cfg)]), errlog=log),
                        mode=mode))
                    down, pids = await hub_downstream(hub_c)
                    leftovers += pids
                    routes = [Route("direct", DIRECT_TOOL, direct_c.protocol_version, "-", [direct_c]),
                              Route("hub", HUB_TOOL, hub_c.protocol_version, f"echo over {down}", [hub_c])]
                    cells += await listing(routes, s, f"tools/list {LIST_TOOLS} ({era} host)")
        return cells
    finally:
        kill_leftovers(leftovers)


async def _stdio_cells(s: Settings, tmp: Path, log: TextIO, leftovers: list[int]) -> list[Cell]:
    hub_cfg = write_hub_config(tmp, "hub-stdio", echo_stdio_entry())
    async with AsyncExitStack() as stack:  # exiting closes stdin, then SIGTERM/SIGKILL (the SDK's stdio_client)
        direct_c = await open_client(stack, stdio_client(stdio_params(["-m", "bench.echo_server"]), errlog=log))
        hub_c = await open_client(stack, stdio_client(
            stdio_params(["-m", "hermes_hub", "serve", "--stdio", "-q", "--config", str(hub_cfg)]), errlog=log))
        floor_c = await open_client(stack, stdio_client(stdio_params(["-m", "bench.floor_proxy"]), errlog=log))
        down, pids = await hub_downstream(hub_c)
        leftovers += pids
        routes = [
            Route("direct", DIRECT_TOOL, direct_c.protocol_version, "-", [direct_c]),
            Route("hub", HUB_TOOL, hub_c.protocol_version, f"echo over {down}", [hub_c]),
            Route(FLOOR, HUB_TOOL, floor_c.protocol_version, "echo over stdio (bench/floor_proxy.py)", [floor_c]),
        ]
        return [*await sequential(routes, s, "stdio"), *await concurrent(routes, s, "stdio")]


async def _http_cells(s: Settings, tmp: Path, log: TextIO, leftovers: list[int]) -> list[Cell]:
    echo_port, hub_port, hub2_port = free_port(), free_port(), free_port()
    echo_url = f"http://127.0.0.1:{echo_port}/mcp"
    hub_cfg = write_hub_config(tmp, "hub-http", {"url": echo_url})
    hub2_cfg = write_hub_config(tmp, "hub-http-stdio", echo_stdio_entry())
    py = sys.executable

    def hub_argv(cfg: Path, port: int) -> list[str]:
        return [py, "-m", "hermes_hub", "serve", "-q", "--config", str(cfg), "--port", str(port)]

    async with AsyncExitStack() as stack:  # exiting closes every Client, then SIGTERM/SIGKILL each server
        await stack.enter_async_context(http_process(
            [py, "-m", "bench.echo_server", "--http", str(echo_port)], echo_url,
            lambda r: r.status_code < 500, "echo server (HTTP)", log))
        await stack.enter_async_context(http_process(
            hub_argv(hub_cfg, hub_port), f"http://127.0.0.1:{hub_port}/readyz", _hub_ready, "hub (HTTP)", log))
        await stack.enter_async_context(http_process(
            hub_argv(hub2_cfg, hub2_port), f"http://127.0.0.1:{hub2_port}/readyz", _hub_ready,
            "hub (HTTP, stdio downstream)", log))
        routes = []
        for name, url, tool in (("direct", echo_url, DIRECT_TOOL),
                                ("hub", f"http://127.0.0.1:{hub_port}/mcp", HUB_TOOL),
                                ("hub (downstream stdio)", f"http://127.0.0.1:{hub2_port}/mcp", HUB_TOOL)):
            clients = [await open_client(stack, url) for _ in range(s.clients)]
            down = "-"
            if tool == HUB_TOOL:
                down, pids = await hub_downstream(clients[0])
                leftovers += pids
                down = f"echo over {down}"
            routes.append(Route(name, tool, clients[0].protocol_version, down, clients))
        # sequential uses each route's first connection; concurrent uses all of them
        return [*await sequential(routes, s, "http"), *await concurrent(routes, s, "http")]


# -- report -----------------------------------------------------------------------------------


def _fmt(v: float, nd: int = 2) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{nd}f}"


def ratios(cells: list[Cell]) -> list[dict[str, Any]]:
    out = []
    for c in cells:
        if c.route == "direct":
            continue
        d = next(x for x in cells if x.transport == c.transport and x.load == c.load and x.route == "direct")
        out.append({
            "transport": c.transport, "load": c.load, "route": c.route,
            "p50_ratio": round(c.p50_ms / d.p50_ms, 3), "p99_ratio": round(c.p99_ms / d.p99_ms, 3),
            "throughput_ratio": round(c.throughput / d.throughput, 3),
        })
    return out


def verdicts(rat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rat:
        if r["route"] == FLOOR:  # a reference, not the hub
            continue
        if r["load"].startswith("tools/list"):
            out.append(_target(r, "p50_ratio", "<=", TARGET_LIST_RATIO))
            continue
        if r["transport"] == "stdio":
            out.append({**_target(r, "p50_ratio", "<=", TARGET_P50_RATIO_STDIO)})
        out.append({**_target(r, "throughput_ratio", ">=", TARGET_THROUGHPUT_RATIO)})
    return out


def _target(r: dict[str, Any], key: str, op: str, bound: float) -> dict[str, Any]:
    value = r[key]
    ok = value <= bound if op == "<=" else value >= bound
    what = "hub/direct p50" if key == "p50_ratio" else "hub/direct throughput"
    return {"transport": r["transport"], "load": r["load"], "route": r["route"], "metric": what,
            "value": value, "target": f"{op} {bound}", "result": "PASS" if ok else "MISS"}


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = [i for i, h in enumerate(headers) if h.endswith(("ms", "/s", "calls", "err", "ratio", "value"))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def render(cells: list[Cell], rat: list[dict[str, Any]], ver: list[dict[str, Any]], s: Settings) -> str:
    rows = [[c.transport, c.load, c.route, f"{c.connections}x{c.in_flight // max(1, c.connections)}"
             if c.load == "concurrent" else "1", str(c.calls), _fmt(c.p50_ms), _fmt(c.p99_ms), _fmt(c.mean_ms),
             _fmt(c.throughput, 0), str(c.errors), c.protocol, c.downstream] for c in cells]
    out = [table(["transport", "load", "route", "conns x in-flight", "calls", "p50 ms", "p99 ms", "mean ms",
                  "calls/s", "err", "protocol", "hub downstream"], rows), ""]
    out.append(table(["transport", "load", "route", "p50 ratio", "p99 ratio", "throughput ratio"],
                     [[r["transport"], r["load"], r["route"], _fmt(r["p50_ratio"]), _fmt(r["p99_ratio"]),
                       _fmt(r["throughput_ratio"])] for r in rat]))
    out.append("")
    out.append(table(["transport", "load", "route", "metric", "value", "target", "result"],
                     [[v["transport"], v["load"], v["route"], v["metric"], _fmt(v["value"]), v["target"], v["result"]]
                      for v in ver]))
    return "\n".join(out)


METHOD = (
    "method: sequential = 1 connection, 1 call in flight, {seq} timed calls per route after {sw} warm-up, routes "
    "alternated every {blk} calls; concurrent = {cl} workers x {cpc} timed calls per route in {rounds} alternating "
    "rounds (stdio: ONE connection with {cl} calls in flight, direct vs hub; HTTP: {cl} Client connections to one "
    "process, direct vs one hub). HTTP 'hub' reaches the same echo server process as 'direct' over HTTP; 'hub "
    "(downstream stdio)' is a second hub process with an echo child over stdio. Latency = client-side wall time "
    "of Client.call_tool; throughput = timed calls / summed wall time of their blocks/rounds. Ratios = hub / "
    "direct from this run. 'floor' (stdio) is bench/floor_proxy.py: a raw line proxy, no SDK, no checks. "
    "tools/list: {lc} raw requests per route and host era, alternated every {lb}, timing the server and the "
    "wire (not the SDK client's own validation of the listing). Targets (informational): stdio p50 ratio <= "
    "{p50}, throughput ratio >= {tp}, tools/list p50 ratio <= {lp}."
)


SECTIONS = {"stdio": bench_stdio, "http": bench_http, "list": bench_list}


async def run(quick: bool = False, out: TextIO = sys.stdout, sections: tuple[str, ...] = tuple(SECTIONS),
              ) -> dict[str, Any]:
    s = Settings.quick() if quick else Settings()
    load_before = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    log_path = RESULTS / "proxy-processes.log"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp, open(log_path, "w") as log:
        os.environ["HERMES_DATA_DIR"] = str(Path(tmp) / "data")  # never the user's hub.db
        cells: list[Cell] = []
        for name in sections:
            print(f"proxy benchmark ({'quick' if quick else 'full'}): {name} ...", file=out, flush=True)
            cells += await SECTIONS[name](s, Path(tmp), log)
    rat = ratios(cells)
    ver = verdicts(rat)
    method = METHOD.format(seq=s.seq_calls, sw=s.seq_warmup, blk=s.seq_block, cl=s.clients,
                           cpc=s.calls_per_client, rounds=s.rounds, p50=TARGET_P50_RATIO_STDIO,
                           tp=TARGET_THROUGHPUT_RATIO, lc=s.list_calls, lb=s.list_block, lp=TARGET_LIST_RATIO)
    print(file=out)
    print(render(cells, rat, ver, s), file=out)
    print(file=out)
    print(textwrap.fill(method, 120), file=out)
    load_after = os.getloadavg()
    print(textwrap.fill(f"machine: {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before / {load_after[0]:.2f} after "
          f"(the benchmark itself adds ~2; much more means other work competed and the numbers are noisy); "
          f"mcp {_version('mcp')}, hermes-hub {_version('hermes-hub')}", 120), file=out)
    doc = {
        "benchmark": "proxy",
        "quick": quick,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "loadavg_before": load_before, "loadavg_after": load_after},
        "versions": {"mcp": _version("mcp"), "hermes-hub": _version("hermes-hub")},
        "settings": asdict(s),
        "method": method,
        "cells": [asdict(c) for c in cells],
        "ratios": rat,
        "targets": ver,
    }
    path = RESULTS / "proxy.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path.relative_to(ROOT)} ({doc['seconds']} s; process output in "
          f"{log_path.relative_to(ROOT)})", file=out)
    return doc


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.proxy", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer calls, for a smoke run")
    p.add_argument("--guards", action="store_true", help="the hub masks every result and counts every call (guards)")
    p.add_argument("sections", nargs="*", choices=[*SECTIONS, []], metavar="SECTION",
                   help=f"only these ({', '.join(SECTIONS)}); default all")
    args = p.parse_args(argv)
    global WITH_GUARDS
    WITH_GUARDS = args.guards
    anyio.run(run, args.quick, sys.stdout, tuple(args.sections) or tuple(SECTIONS))


if __name__ == "__main__":
    main()
