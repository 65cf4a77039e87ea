"""How HNSW's ``ef_search`` trades latency for exactness on PostgreSQL (issue 10, vectors at 100k).

    python -m bench.hnsw_pg [--count 100000]

One user's k=20 nearest among ``count`` 384-dimension vectors (the clustered data of
``bench.storage_pg``, 10% another user's), for several ``ef_search`` values: p50 latency and
recall@20 against the exact answer (a sequential scan, measured in the same run as the baseline).
The index is built after a bulk load here (CREATE INDEX), not row by row as the hub's indexer does.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from bench.storage_pg import DIMS, K, _bulk_memories, _unit
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.postgres import vectors as pgmem

QUERIES = 50


async def run(count: int) -> None:
    import pgserver

    with tempfile.TemporaryDirectory(prefix="hermes-bench-hnsw-") as tmp:
        os.chmod(tmp, 0o755)
        server = await anyio.to_thread.run_sync(lambda: pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop"))
        try:
            async with open_store(server.get_uri() + "&statement_timeout=1800") as store:
                rows = await _bulk_memories(store, count)
                table = await store.ensure_vector_table("memories", "hnsw", DIMS)
                await store.raw(f"DROP INDEX {table}_hnsw", write=True)
                rng = random.Random(count)
                t0 = time.perf_counter()
                for start in range(0, count, 5000):
                    chunk = rows[start:start + 5000]
                    await store.add_vectors(table, [(pk, uid, _unit(rng)) for pk, uid in chunk], mark=table,
                                            last_pk=chunk[-1][0])
                load = time.perf_counter() - t0
                t0 = time.perf_counter()

                async def build_index(conn: object) -> None:
                    await conn.execute("SET LOCAL maintenance_work_mem = '512MB'")  # type: ignore[attr-defined]
                    await conn.execute(f"CREATE INDEX {table}_hnsw ON {table} "  # type: ignore[attr-defined]
                                       "USING hnsw (embedding vector_cosine_ops)")

                await store._run(build_index)  # type: ignore[attr-defined]
                build = time.perf_counter() - t0
                await store.raw("ANALYZE", write=True)
                print(f"{count:,} vectors: loaded in {load:.0f} s, HNSW built in {build:.0f} s", flush=True)
                queries = [_unit(random.Random(1000 + i)) for i in range(QUERIES)]
                exact, times = [], []
                for q in queries:  # the baseline: an exact scan of the user's rows
                    t = time.perf_counter()
                    got = await store.raw(f"SELECT pk FROM {table} WHERE user_id = 'u' ORDER BY "
                                          "(embedding <=> $1::real[]::vector) + 0 LIMIT 20", [q])
                    times.append(time.perf_counter() - t)
                    exact.append({r[0] for r in got})
                print(f"exact scan: p50 {statistics.median(times) * 1e3:.1f} ms (baseline)")
                base = statistics.median(times)
                for ef in (40, 100, 200, 400):
                    pgmem.EF_SEARCH = ef
                    times, hits = [], []
                    for q, want in zip(queries, exact, strict=True):
                        t = time.perf_counter()
                        got = await store.nearest(table, "u", q, K)
                        times.append(time.perf_counter() - t)
                        hits.append(len({r.pk for r in got} & want) / len(want))
                    p50 = statistics.median(times)
                    print(f"ef_search {ef:>3}: p50 {p50 * 1e3:.1f} ms ({p50 / base:.2f}x the scan), "
                          f"recall@{K} {statistics.mean(hits):.3f}")
        finally:
            await anyio.to_thread.run_sync(server.cleanup)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hnsw_pg", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    anyio.run(run, parser.parse_args(argv).count)


if __name__ == "__main__":
    main()
