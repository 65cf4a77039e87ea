"""Cache-hint benchmark (issue 19, section 3): what a host that honours ``ttlMs`` saves on repeated
``tools/list`` through the hub.

    python -m bench.cache [--quick]

A host re-lists the hub's tools before each of its turns. Here that is ``LOOKUPS`` look-ups, one every
``EVERY`` seconds, by a small caching loop that keeps the last listing until its ``ttlMs`` runs out
(a 2026-07-28 ``Client`` with the SDK's own cache off, so every fetch is a real request). Two real
``hermes-hub serve`` processes over streamable HTTP, each with the same downstream (``bench/echo_server``
with 200 tools, talked to at 2026-07-28), are measured in the same run, alternating:

* **without hints** (the baseline): the downstream sets none (the SDK sends ``ttlMs: 0``) and
  ``hub.cache_ttl_ms`` is 0, so every list says ttl 0 and every look-up is a request;
* **with hints**: the downstream says ``ttlMs`` 30,000 (``--ttl``), the hub passes it through.

Printed per route: look-ups, requests that reached the hub, the total time the look-ups took and the
mean per look-up; then the ratios with hints over without.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp.types as types
from mcp import Client

from bench import run_alone
from bench.proxy import ROOT, _hub_ready, free_port, http_process

RESULTS = Path(__file__).resolve().parent / "results"
TTL_MS = 30_000
TOOLS = 199  # + echo: 200 tools


class CachingHost:
    """The caching loop of a host: serve the kept listing while its ``ttlMs`` lasts, else fetch."""

    def __init__(self, client: Client) -> None:
        self.client, self.requests = client, 0
        self._kept: types.ListToolsResult | None = None
        self._fresh_until = 0.0

    async def tools(self) -> types.ListToolsResult:
        now = time.monotonic()
        if self._kept is not None and now < self._fresh_until:
            return self._kept
        self._kept = await self.client.list_tools()
        self.requests += 1
        self._fresh_until = now + self._kept.ttl_ms / 1000
        return self._kept


def hub_config(tmp: Path, name: str, hinted: bool) -> Path:
    args = ["-m", "bench.echo_server", "--tools", str(TOOLS), *(["--ttl", str(TTL_MS)] if hinted else [])]
    doc = {"mcpServers": {"echo": {"command": sys.executable, "args": args, "cwd": str(ROOT), "mode": "2026-07-28"}},
           "hub": {"name": f"bench-{name}", "cache_ttl_ms": 60_000 if hinted else 0},
           "memory": {"embedder": "none"}, "storage": {"url": f"sqlite:///{tmp}/{name}.db"}}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


async def measure(hosts: dict[str, CachingHost], lookups: int, every: float) -> dict[str, dict[str, Any]]:
    """``lookups`` look-ups per host, interleaved (so machine noise hits both alike), one every ``every`` s."""
    took: dict[str, list[float]] = {name: [] for name in hosts}
    for i in range(lookups):
        for name in (list(hosts) if i % 2 == 0 else list(reversed(hosts))):
            start = time.perf_counter()
            listed = await hosts[name].tools()
            took[name].append(time.perf_counter() - start)
            assert len(listed.tools) > TOOLS, f"{name}: the hub lists {len(listed.tools)} tools"
        await anyio.sleep(every)  # the host's turn: what a look-up waits between
    return {name: {"lookups": lookups, "requests": hosts[name].requests, "total_ms": round(sum(t) * 1000, 1),
                   "mean_ms": round(statistics.fmean(t) * 1000, 3), "ttl_ms_seen": hosts[name]._kept.ttl_ms
                   if hosts[name]._kept else None} for name, t in took.items()}


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    started = time.perf_counter()
    lookups, every = (60, 0.01) if quick else (300, 0.02)
    print(f"cache benchmark ({'quick' if quick else 'full'}): {lookups} tools/list look-ups per route, "
          f"one every {every * 1000:g} ms, {TOOLS + 1} tools", file=out, flush=True)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-cache-") as tmp_dir, open(
            Path(tmp_dir) / "processes.log", "w") as log:
        tmp = Path(tmp_dir)
        os.environ.setdefault("HERMES_DATA_DIR", str(tmp / "data"))
        async with AsyncExitStack() as stack:
            hosts: dict[str, CachingHost] = {}
            for name, hinted in (("without hints", False), ("with hints", True)):
                port = free_port()
                cfg = hub_config(tmp, name.replace(" ", "-"), hinted)
                argv = [sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--port", str(port)]
                await stack.enter_async_context(http_process(argv, f"http://127.0.0.1:{port}/readyz", _hub_ready,
                                                             f"hub ({name})", log))
                client = await stack.enter_async_context(Client(f"http://127.0.0.1:{port}/mcp", cache=None))
                await client.list_tools()  # connect and warm up: never timed
                hosts[name] = CachingHost(client)
            with anyio.fail_after(300):
                rows = await measure(hosts, lookups, every)
    base, hinted = rows["without hints"], rows["with hints"]
    doc = {"benchmark": "cache", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "cpus": os.cpu_count(), "loadavg": list(os.getloadavg()), "ttl_ms": TTL_MS, "tools": TOOLS + 1,
           "every_s": every, "routes": rows,
           "ratios": {"requests": round(hinted["requests"] / base["requests"], 4),
                      "time": round(hinted["total_ms"] / base["total_ms"], 4)},
           "seconds": round(time.perf_counter() - started, 1)}
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "cache.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def render(doc: dict[str, Any]) -> str:
    lines = ["| route | look-ups | requests to the hub | total | per look-up | ttlMs seen |",
             "|---|---|---|---|---|---|"]
    for name, r in doc["routes"].items():
        lines.append(f"| {name} | {r['lookups']} | {r['requests']} | {r['total_ms']:.1f} ms | {r['mean_ms']:.3f} ms "
                     f"| {r['ttl_ms_seen']} |")
    ratios = doc["ratios"]
    lines.append(f"\nwith hints / without (same run): requests x{ratios['requests']:.3f}, time x{ratios['time']:.3f}")
    return "\n".join(lines)


def main() -> None:
    run_alone("cache", run, __doc__)


if __name__ == "__main__":
    main()
