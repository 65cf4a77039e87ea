"""Storage benchmark (issue 4): append throughput, history page cost vs history length, search latency.

    python -m bench.storage [--quick]        (also: python -m bench storage)

Everything runs against a real SQLite file in a temporary folder, through the public service
(``Sessions``), so each figure includes the worker-thread hop and the pydantic models a caller pays.

* append throughput: one message per call, sequentially and from 16 concurrent tasks (each on its own
  session: one writer serialises them all), and 100 messages per call;
* page ratio: p50 of reading one 50-message history page at a random cursor (collected by paging
  through, as a caller would) from a 100,000-message
  session ÷ the same from a 100-message session (target ≤ 1.2: the cost must follow the page, not the
  history). Both are warmed up and measured in alternating blocks of the same run;
* search latency over the 100,000 messages (mixed English and Chinese text), newest hits first, limit 20:
  terms of 3+ characters use the FTS5 trigram index; a query made only of 1-2 character terms (北京)
  scans the caller's messages newest first, so a rare one costs a full scan of that user's history.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio

from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import NewMessage, utcnow

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_PAGE_RATIO = 1.2
PAGE = 50
USER = "bench"
SEARCHES = {
    "rare English word": "zebrafish",
    "common English word": "budget",
    "two English words": "quarterly budget",
    "Chinese phrase (trigram)": "北京开会",
    "two Chinese chars, common (scan)": "预算",
    "two Chinese chars, rare (scan)": "斑马",
}


def _text(rng: random.Random, i: int) -> str:
    words = [rng.choice(_EN) for _ in range(rng.randint(6, 24))]
    if i % 10 == 0:
        words.insert(rng.randrange(len(words)), "budget")
    if i % 25 == 0:
        words.insert(rng.randrange(len(words)), "quarterly")
    if i % 10_000 == 9_999:  # only the bulk-loaded history gets this far
        words.append("zebrafish 斑马鱼")
    zh = "".join(rng.choice(_ZH) for _ in range(rng.randint(0, 30)))
    if i % 1000 == 3:
        zh += "我们明天去北京开会"
    if i % 50 == 1:
        zh += "讨论预算"
    return " ".join(words) + ("。" + zh if zh else "")


_SYL = ["ka", "lo", "mi", "ren", "tas", "vo", "shi", "pel", "dur", "an", "ex", "qui", "zo", "bra", "ti", "nor"]
_EN = ["".join(random.Random(n).choices(_SYL, k=random.Random(n + 1).randint(1, 3))) for n in range(3000)]
_ZH = list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严")


async def _timed(fn: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - t0)
    return out


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


async def _append_throughput(sessions: Sessions, n: int) -> dict[str, float]:
    rng = random.Random(1)
    seq = await sessions.create(USER, "append-seq")
    t0 = time.perf_counter()
    for i in range(n):
        await sessions.append(USER, seq.session_id, role="user", content=_text(rng, i))
    sequential = n / (time.perf_counter() - t0)

    tasks = 16
    targets = [(await sessions.create(USER, f"append-{k}")).session_id for k in range(tasks)]

    async def writer(sid: str) -> None:
        for i in range(n // tasks):
            await sessions.append(USER, sid, role="assistant", content=_text(rng, i))

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for sid in targets:
            tg.start_soon(writer, sid)
    concurrent = (n // tasks) * tasks / (time.perf_counter() - t0)

    batch = await sessions.create(USER, "append-batch")
    t0 = time.perf_counter()
    for b in range(n // 100):
        await sessions.append_many(USER, batch.session_id,
                                   [{"role": "user", "content": _text(rng, b * 100 + i)} for i in range(100)])
    batched = (n // 100) * 100 / (time.perf_counter() - t0)
    return {"sequential_msgs_per_s": sequential, "concurrent16_msgs_per_s": concurrent,
            "batch100_msgs_per_s": batched}


async def _fill(store: Any, session_id: str, n: int, out: TextIO, prefix: str = "b") -> float:
    """Bulk-load ``n`` messages through the store (1,000 per transaction); return seconds."""
    rng = random.Random(42)
    t0 = time.perf_counter()
    for start in range(0, n, 1000):
        batch = [NewMessage(f"msg_{prefix}{i}", "user" if i % 2 else "assistant", _text(rng, i), utcnow(),
                            metadata={"token_estimate": 30}) for i in range(start, min(n, start + 1000))]
        await store.append_messages(USER, session_id, batch)
        if start and start % 20_000 == 0:
            print(f"  loaded {start:,} messages …", file=out, flush=True)
    return time.perf_counter() - t0


async def _cursors(sessions: Sessions, sid: str) -> list[str | None]:
    """Every page cursor of a session, collected the way a caller gets them: by paging through."""
    out: list[str | None] = [None]
    while True:
        page = await sessions.history(USER, sid, limit=PAGE, cursor=out[-1])
        if page.next_cursor is None:
            return out
        out.append(page.next_cursor)


async def _page_ratio(sessions: Sessions, big: str, small: str, rounds: int) -> dict[str, float]:
    rng = random.Random(7)

    def at_random_page(sid: str, cursors: list[str | None]) -> Callable[[], Awaitable[Any]]:
        return lambda: sessions.history(USER, sid, limit=PAGE, cursor=rng.choice(cursors))

    def newest(sid: str) -> Callable[[], Awaitable[Any]]:
        return lambda: sessions.history(USER, sid, limit=PAGE, newest_first=True)

    fns = {"big": at_random_page(big, await _cursors(sessions, big)),
           "small": at_random_page(small, await _cursors(sessions, small)),
           "big_newest": newest(big), "small_newest": newest(small)}
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        await _timed(fn, 20)  # warm-up: caches, reader connections
    for _ in range(rounds):  # alternate blocks so machine noise hits both alike
        for key, fn in fns.items():
            samples[key] += await _timed(fn, 20)
    p50 = {k: statistics.median(v) for k, v in samples.items()}
    return {"big_p50_ms": p50["big"] * 1e3, "small_p50_ms": p50["small"] * 1e3,
            "ratio": p50["big"] / p50["small"], "big_newest_p50_ms": p50["big_newest"] * 1e3,
            "small_newest_p50_ms": p50["small_newest"] * 1e3, "ratio_newest": p50["big_newest"] / p50["small_newest"]}


async def _search(sessions: Sessions, reps: int) -> dict[str, dict[str, float]]:
    out = {}
    for label, q in SEARCHES.items():
        hits = len(await sessions.search(USER, q, limit=20))
        xs = await _timed(lambda q=q: sessions.search(USER, q, limit=20), reps)
        out[label] = {"query": q, "hits": hits, "p50_ms": statistics.median(xs) * 1e3, "p95_ms": _pct(xs, 0.95) * 1e3}
    return out


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    big_n = 20_000 if quick else 100_000
    started, load_before = time.perf_counter(), os.getloadavg()
    print(f"storage benchmark ({'quick' if quick else 'full'}): sqlite, {big_n:,}-message session", file=out,
          flush=True)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        async with open_store(f"sqlite:///{tmp}/hub.db") as store:
            sessions = Sessions(store)
            appends = await _append_throughput(sessions, 400 if quick else 2000)
            big = (await sessions.create(USER, "big")).session_id
            small = (await sessions.create(USER, "small")).session_id
            load_s = await _fill(store, big, big_n, out)
            await _fill(store, small, 100, out, prefix="s")  # same text generator as the big one
            pages = await _page_ratio(sessions, big, small, rounds=5 if quick else 15)
            searches = await _search(sessions, 5 if quick else 20)
            db_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
    doc = {
        "benchmark": "storage", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "loadavg_before": list(load_before), "loadavg_after": list(os.getloadavg())},
        "settings": {"messages": big_n, "page": PAGE, "bulk_load_s": round(load_s, 1), "db_mb": round(db_mb, 1)},
        "append": appends, "page": pages, "search": searches,
        "targets": {"page_ratio_max": TARGET_PAGE_RATIO, "page_ratio_met": pages["ratio"] <= TARGET_PAGE_RATIO},
    }
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "storage.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def render(doc: dict[str, Any]) -> str:
    a, p, n = doc["append"], doc["page"], doc["settings"]["messages"]
    met = "PASS" if doc["targets"]["page_ratio_met"] else "MISS"
    rows = [
        ("append, 1 message per call, sequential", f"{a['sequential_msgs_per_s']:,.0f} msg/s", ""),
        ("append, 1 message per call, 16 tasks", f"{a['concurrent16_msgs_per_s']:,.0f} msg/s",
         f"{a['concurrent16_msgs_per_s'] / a['sequential_msgs_per_s']:.2f}x sequential"),
        ("append, 100 messages per call", f"{a['batch100_msgs_per_s']:,.0f} msg/s",
         f"{a['batch100_msgs_per_s'] / a['sequential_msgs_per_s']:.1f}x sequential"),
        (f"history page ({PAGE}), 100-message session", f"{p['small_p50_ms']:.2f} ms p50", "baseline"),
        (f"history page ({PAGE}), {n:,}-message session", f"{p['big_p50_ms']:.2f} ms p50",
         f"{p['ratio']:.2f}x (target <= {TARGET_PAGE_RATIO}: {met})"),
        (f"newest page ({PAGE}), 100 vs {n:,}", f"{p['small_newest_p50_ms']:.2f} / {p['big_newest_p50_ms']:.2f} ms",
         f"{p['ratio_newest']:.2f}x"),
    ]
    for label, s in doc["search"].items():
        rows.append((f"search {label} {s['query']!r}", f"{s['p50_ms']:.2f} ms p50",
                     f"p95 {s['p95_ms']:.2f} ms, {s['hits']} hits (limit 20)"))
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    lines = [f"{'measure':<{w0}}  {'value':>{w1}}  ratio / note", "-" * (w0 + w1 + 30)]
    lines += [f"{r[0]:<{w0}}  {r[1]:>{w1}}  {r[2]}" for r in rows]
    m = doc["machine"]
    lines.append(f"(search over {n:,} messages; bulk load {doc['settings']['bulk_load_s']} s, "
                 f"database {doc['settings']['db_mb']} MB; {m['cpus']} CPUs, load average "
                 f"{m['loadavg_before'][0]:.2f} before / {m['loadavg_after'][0]:.2f} after)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 messages instead of 100,000")
    anyio.run(run, parser.parse_args(argv).quick)


if __name__ == "__main__":
    main()
