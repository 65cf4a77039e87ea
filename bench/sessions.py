"""What opening a session costs: from a new connection to the first ``tools/list`` answer, hub ÷ direct.

    python -m bench.sessions [--quick]

HTTP: a new ``Client`` to a running server, its handshake (``initialize`` for a handshake-era host,
``server/discover`` for a 2026-07-28 one) and its first ``tools/list``, then closed; direct to
bench/echo_server.py over HTTP, and to a hub serving that same echo server (an HTTP downstream). Each
route alternates in blocks; median and p90 of N sessions each. stdio: from spawning the process to the
first ``tools/list`` answer, the echo server itself against ``hermes-hub serve --stdio`` with the echo
server as its child (the hub's first answer comes at once; the time until the echo tool is in its list
is given beside it). Ratios are from the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from bench.proxy import (HUB_TOOL, _hub_ready, echo_stdio_entry, free_port, http_process, stdio_params,
                         write_hub_config)

ROUNDS, BLOCK = 40, 5  # HTTP sessions per route and era, alternated every BLOCK
SPAWNS = 7  # stdio processes per route


async def _session(target: Any, mode: str) -> float:
    started = time.perf_counter()
    async with Client(target, mode=mode) as client:
        await client.list_tools()
        return time.perf_counter() - started


async def _http(tmp: Path, log: Any, rounds: int) -> list[dict[str, Any]]:
    echo_port, hub_port = free_port(), free_port()
    echo_url, hub_url = f"http://127.0.0.1:{echo_port}/mcp", f"http://127.0.0.1:{hub_port}/mcp"
    cfg = write_hub_config(tmp, "hub-sessions", {"url": echo_url})
    py = sys.executable
    rows = []
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(http_process([py, "-m", "bench.echo_server", "--http", str(echo_port)],
                                                     echo_url, lambda r: r.status_code < 500, "echo (HTTP)", log))
        await stack.enter_async_context(http_process(
            [py, "-m", "hermes_hub", "serve", "-q", "--config", str(cfg), "--port", str(hub_port)],
            f"http://127.0.0.1:{hub_port}/readyz", _hub_ready, "hub (HTTP)", log))
        for era, mode in (("2026-07-28", "auto"), ("handshake", "legacy")):
            times: dict[str, list[float]] = {"direct": [], "hub": []}
            for _ in range(2):  # warm both
                await _session(echo_url, mode)
                await _session(hub_url, mode)
            for _ in range(rounds // BLOCK):
                for route, url in (("direct", echo_url), ("hub", hub_url)):
                    for _ in range(BLOCK):
                        times[route].append(await _session(url, mode))
            rows.append(_row("http", era, times))
    return rows


async def _first_list(args: list[str], want: str | None, log: Any) -> tuple[float, float | None]:
    """Seconds from spawn to the first tools/list answer, and to the first one naming ``want``."""
    started = time.perf_counter()
    async with Client(stdio_client(stdio_params(args), errlog=log), mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        first = time.perf_counter() - started
        if want is None:
            return first, None
        with anyio.fail_after(60):
            while want not in names:
                await anyio.sleep(0.02)
                names = {t.name for t in (await client.list_tools()).tools}
        return first, time.perf_counter() - started


async def _stdio(tmp: Path, log: Any, spawns: int) -> list[dict[str, Any]]:
    cfg = write_hub_config(tmp, "hub-sessions-stdio", echo_stdio_entry())
    times: dict[str, list[float]] = {"direct": [], "hub": []}
    full: list[float] = []
    for _ in range(spawns):
        times["direct"].append((await _first_list(["-m", "bench.echo_server"], None, log))[0])
        first, listed = await _first_list(["-m", "hermes_hub", "serve", "--stdio", "-q", "--config", str(cfg)],
                                          HUB_TOOL, log)
        times["hub"].append(first)
        full.append(listed or 0.0)
    row = _row("stdio (spawn)", "handshake", times)
    row["hub_with_echo_s"] = round(statistics.median(full), 3)
    return [row]


def _row(transport: str, era: str, times: dict[str, list[float]]) -> dict[str, Any]:
    med = {k: statistics.median(v) for k, v in times.items()}
    p90 = {k: sorted(v)[int(0.9 * (len(v) - 1))] for k, v in times.items()}
    return {"transport": transport, "era": era, "n": len(times["direct"]), "direct_ms": round(med["direct"] * 1000, 1),
            "hub_ms": round(med["hub"] * 1000, 1), "direct_p90_ms": round(p90["direct"] * 1000, 1),
            "hub_p90_ms": round(p90["hub"] * 1000, 1), "ratio": round(med["hub"] / med["direct"], 2)}


async def run(quick: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "processes.log", "w") as log:
        rows = await _http(Path(tmp), log, 10 if quick else ROUNDS)
        rows += await _stdio(Path(tmp), log, 3 if quick else SPAWNS)
    print(f"{'transport':<15}{'host':<12}{'n':>4}{'direct p50':>12}{'hub p50':>10}{'direct p90':>12}{'hub p90':>10}"
          f"{'hub/direct':>12}")
    for r in rows:
        print(f"{r['transport']:<15}{r['era']:<12}{r['n']:>4}{r['direct_ms']:>10.1f}ms{r['hub_ms']:>8.1f}ms"
              f"{r['direct_p90_ms']:>10.1f}ms{r['hub_p90_ms']:>8.1f}ms{r['ratio']:>12.2f}")
    for r in rows:
        if "hub_with_echo_s" in r:
            print(f"stdio: the hub's list names the echo tool {r['hub_with_echo_s']:.2f} s after spawn (median)")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sessions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    anyio.run(run, parser.parse_args().quick)


if __name__ == "__main__":
    main()
