"""The fuzz benchmark's bounds round (issue 16): oversized inputs against a real ``hermes-hub serve``.

    python -m bench.fuzz_bounds [--quick] [--only headers,words,descriptions]   (also part of bench.fuzz)

One hub process (HTTP, two tokens: ``bob`` a user, ``root`` an admin; a lazy toolset ``lazy`` at
``/mcp/lazy``; one ``bench.echo_server`` downstream) is sent, in turn:

- **headers**: 4 concurrent POSTs to ``/mcp``, each with one 50 MB header;
- **words**: ``hermes_tools_search`` as bob with one random word of 60,000 letters (and 150,000
  outside ``--quick``);
- **descriptions**: a reload adding a server whose one tool's description is a single 1,000,000-letter
  word and another with 2,000,000 (the index is rebuilt while the lazy toolset exists), then
  ``hermes_hub_status`` and ``/status.json`` as root, then SIGTERM.

For each: what came back, how long it took, the slowest ``/healthz`` answer while it ran (probed
every 50 ms, each probe bounded at 5 s) and the hub's RSS before, at its peak and after. Targets:
answered or refused within 5 s, ``/healthz`` within 1 s, RSS growth under 200 MB.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import string
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2

ROOT = Path(__file__).resolve().parent.parent
PROBE_EVERY = 0.05  # seconds between /healthz probes
PROBE_BOUND = 5.0  # one probe; a hub stalled longer counts as stalled this long
ANSWER_TARGET_S, HEALTHZ_TARGET_S, RSS_GROWTH_TARGET_MB = 5.0, 1.0, 200.0
ANSWER_WAIT = 120.0  # the longest any one case may take before it counts as no answer
HEADER_BYTES = 50 * 1024 * 1024
BOB, ROOT_TOKEN = "bob-bench-token-0000000000", "root-bench-token-000000000"
WORDS = (60_000, 150_000)
DESCRIPTIONS = (1_000_000, 2_000_000)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def one_word(length: int, seed: int = 16) -> str:
    """``length`` random lower-case letters: a word no dictionary knows."""
    return "".join(random.Random(seed).choices(string.ascii_lowercase, k=length))


@dataclass
class Watch:
    """What the probe saw while a block ran."""

    rss_before_mb: float
    rss_peak_mb: float = 0.0
    rss_after_mb: float = 0.0
    healthz_max_s: float = 0.0
    probes: int = 0
    unanswered: int = 0  # probes that failed or took past PROBE_BOUND

    @property
    def rss_growth_mb(self) -> float:
        return max(self.rss_peak_mb, self.rss_after_mb) - self.rss_before_mb


@asynccontextmanager
async def watched(base: str, pid: int) -> AsyncIterator[Watch]:
    """While the block runs, ``base``/healthz is probed every ``PROBE_EVERY`` and ``pid``'s RSS sampled."""
    w = Watch(rss_mb(pid))
    w.rss_peak_mb = w.rss_before_mb

    async def probe(http: httpx2.AsyncClient) -> None:
        while True:
            began, ok = time.perf_counter(), False
            with anyio.move_on_after(PROBE_BOUND):
                try:
                    ok = (await http.get(f"{base}/healthz")).status_code == 200
                except httpx2.HTTPError:
                    pass
            w.healthz_max_s = max(w.healthz_max_s, time.perf_counter() - began)
            w.probes += 1
            w.unanswered += not ok
            w.rss_peak_mb = max(w.rss_peak_mb, rss_mb(pid))
            await anyio.sleep(PROBE_EVERY)  # the probe's interval, not a wait for a state

    async with httpx2.AsyncClient(timeout=PROBE_BOUND) as http, anyio.create_task_group() as tg:
        tg.start_soon(probe, http)
        try:
            yield w
        finally:
            tg.cancel_scope.cancel()
            w.rss_after_mb = rss_mb(pid)
            w.rss_peak_mb = max(w.rss_peak_mb, w.rss_after_mb)


@dataclass
class Row:
    case: str
    outcome: str = ""
    seconds: float = float("nan")
    watch: Watch | None = None

    @property
    def passed(self) -> bool:
        w = self.watch
        return (w is not None and self.seconds <= ANSWER_TARGET_S and w.healthz_max_s <= HEALTHZ_TARGET_S
                and w.unanswered == 0 and w.rss_growth_mb <= RSS_GROWTH_TARGET_MB)


def hub_config() -> dict[str, Any]:
    echo = {"command": sys.executable, "args": ["-m", "bench.echo_server"], "cwd": str(ROOT), "timeout": 20}
    return {"mcpServers": {"echo": echo},
            "toolsets": {"lazy": {"expose": "lazy"}},
            "auth": {"tokens": [{"token": BOB, "user": "bob"}, {"token": ROOT_TOKEN, "user": "root", "role": "admin"}]}}


def huge_servers(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` plus one server per size in ``DESCRIPTIONS``, each a tool described by one huge word."""
    servers = dict(config["mcpServers"])
    for size in DESCRIPTIONS:
        servers[f"huge{size // 1_000_000}m"] = {**servers["echo"], "args": ["-m", "bench.echo_server",
                                                                          "--huge-description", str(size)]}
    return {**config, "mcpServers": servers}


@asynccontextmanager
async def as_user(url: str, token: str) -> AsyncIterator[Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=ANSWER_WAIT))
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        yield client


def _found(result: Any) -> list[str] | str:
    """The tool names a search answered, or what it said instead."""
    text = " ".join(getattr(b, "text", "") for b in result.content)
    if result.is_error:
        return f"refused: {text[:70]}"
    try:
        return [t["name"] for t in json.loads(text)["tools"]]
    except (ValueError, KeyError, TypeError):
        return f"answered: {text[:40]}"


async def _semantic(client: Any) -> bool:
    """Whether tool search has its vectors: only they find anything for a word no tool has."""
    return bool(_found(await client.call_tool("hermes_tools_search", {"query": "zqxjv"})))


def _said(result: Any) -> str:
    found = _found(result)
    return found if isinstance(found, str) else f"answered: {len(found)} tools found"


async def _timed(row: Row, base: str, pid: int, work: Any) -> Row:
    async with watched(base, pid) as row.watch:
        began = time.perf_counter()
        try:
            with anyio.fail_after(ANSWER_WAIT):
                row.outcome = await work()
        except TimeoutError:
            row.outcome = f"no answer within {ANSWER_WAIT:g} s"
        except Exception as e:  # noqa: BLE001 - what the hub did is the figure
            while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                e = e.exceptions[0]
            row.outcome = f"{type(e).__name__}: {str(e)[:60]}"
        row.seconds = time.perf_counter() - began
    return row


async def raw_head(port: int, size: int, chunk: int = 64 * 1024) -> tuple[bytes, int, float]:
    """A POST whose one header is ``size`` bytes, sent in chunks over a raw socket while the answer is
    read (as an attacker would: no client library building 50 MB first): (answer, bytes sent, seconds)."""
    started, sent, answer = time.perf_counter(), 0, bytearray()
    async with await anyio.connect_tcp("127.0.0.1", port) as sock:
        async def send() -> None:
            nonlocal sent
            await sock.send(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Filler: ".encode())
            filler = b"a" * chunk
            try:
                while sent < size:
                    await sock.send(filler)
                    sent += chunk
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the hub stopped reading: what it answered is read meanwhile

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            try:
                while True:
                    answer += await sock.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass
            tg.cancel_scope.cancel()
    return bytes(answer), sent, time.perf_counter() - started


async def headers_case(base: str, pid: int) -> Row:
    port = int(base.rsplit(":", 1)[1])

    async def work() -> str:
        answers: list[tuple[bytes, int, float]] = []

        async def one() -> None:
            answers.append(await raw_head(port, HEADER_BYTES))

        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(one)
        codes = Counter(a.split(b" ", 2)[1].decode() if a.startswith(b"HTTP/") else "no answer" for a, _, _ in answers)
        most = max(sent for _, sent, _ in answers)
        return ", ".join(f"HTTP {k} x{v}" for k, v in sorted(codes.items())) + f" (sent <= {most // 1024} KiB)"

    return await _timed(Row("4 x 50 MB header"), base, pid, work)


async def word_case(base: str, pid: int, length: int) -> Row:
    async def work() -> str:
        async with as_user(f"{base}/mcp/lazy", BOB) as bob:
            return _said(await bob.call_tool("hermes_tools_search", {"query": one_word(length)}))

    return await _timed(Row(f"tools_search, one {length:,}-letter word"), base, pid, work)


async def reload_case(base: str, pid: int, config: Path) -> Row:
    async def work() -> str:
        async with as_user(f"{base}/mcp", ROOT_TOKEN) as root:
            config.write_text(json.dumps(huge_servers(hub_config())))
            await root.call_tool("hermes_hub_reload", {})
        async with as_user(f"{base}/mcp/lazy", BOB) as bob:  # found once the new servers are indexed
            wanted = {f"{name}_huge" for name in huge_servers(hub_config())["mcpServers"] if name != "echo"}
            while not wanted <= set(found := _found(await bob.call_tool("hermes_tools_search", {"query": "huge"}))):
                await anyio.sleep(0.2)  # the servers start in the background; bounded by ANSWER_WAIT
        return f"found: {', '.join(sorted(wanted))}"

    sizes = " and ".join(f"{s // 1_000_000}M" for s in DESCRIPTIONS)
    return await _timed(Row(f"reload: {sizes}-letter descriptions, until found"), base, pid, work)


async def status_case(base: str, pid: int) -> Row:
    async def work() -> str:
        async with as_user(f"{base}/mcp", ROOT_TOKEN) as root:
            status = await root.call_tool("hermes_hub_status", {})
        async with httpx2.AsyncClient(timeout=ANSWER_WAIT) as http:
            r = await http.get(f"{base}/status.json", headers={"Authorization": f"Bearer {ROOT_TOKEN}"})
        return f"hub_status {'error' if status.is_error else 'ok'}, /status.json HTTP {r.status_code}"

    return await _timed(Row("hermes_hub_status + /status.json"), base, pid, work)


async def run_bounds(tmp: Path, log: TextIO, quick: bool = False,
                     only: tuple[str, ...] = ("headers", "words", "descriptions")) -> list[Row]:
    from bench.fuzz import http_hub

    config = tmp / "bounds-hub.json"
    config.write_text(json.dumps(hub_config()))
    rows: list[Row] = []
    async with http_hub(tmp, log, config) as (url, proc):
        base, pid = url.removesuffix("/mcp"), proc.pid
        async with as_user(f"{base}/mcp/lazy", BOB) as bob:  # the embedder loaded, the tools embedded
            with anyio.fail_after(ANSWER_WAIT):  # (in the background, once): a word shared by none finds some
                while not await _semantic(bob):
                    await anyio.sleep(0.2)
        async with as_user(f"{base}/mcp", ROOT_TOKEN) as root:  # and the tokenizer (~130 MB, ~3 s, once)
            await root.call_tool("hermes_hub_status", {})
        if "headers" in only:
            rows.append(await headers_case(base, pid))
        if "words" in only:
            for length in WORDS[:1] if quick else WORDS:
                rows.append(await word_case(base, pid, length))
        if "descriptions" in only:
            rows.append(await reload_case(base, pid, config))
            rows.append(await status_case(base, pid))
            stop = Row("SIGTERM with both present")
            began = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            with anyio.move_on_after(30):
                await proc.wait()
            stop.seconds = time.perf_counter() - began
            stop.outcome = f"exited {proc.returncode}" if proc.returncode is not None else "still running after 30 s"
            rows.append(stop)
    return rows


def render_bounds(rows: list[Row]) -> str:
    from bench.proxy import table

    out = []
    for r in rows:
        w = r.watch
        out.append([r.case, r.outcome, f"{r.seconds:.2f}",
                    f"{w.healthz_max_s * 1000:.0f}" if w else "-", str(w.unanswered) if w else "-",
                    f"{w.rss_before_mb:.0f}" if w else "-", f"{w.rss_peak_mb:.0f}" if w else "-",
                    f"{w.rss_growth_mb:.0f}" if w else "-", ("PASS" if r.passed else "MISS") if w else "-"])
    return table(["case", "outcome", "seconds", "healthz max ms", "healthz lost", "RSS before MB", "RSS peak MB",
                  "RSS growth MB", "targets"], out) + (
        f"\n(targets: answered or refused within {ANSWER_TARGET_S:g} s, /healthz within {HEALTHZ_TARGET_S:g} s, "
        f"RSS growth under {RSS_GROWTH_TARGET_MB:g} MB)")


def as_json(rows: list[Row]) -> list[dict[str, Any]]:
    return [{"case": r.case, "outcome": r.outcome, "seconds": round(r.seconds, 3), "passed": r.passed,
             **({"healthz_max_s": round(r.watch.healthz_max_s, 3), "healthz_unanswered": r.watch.unanswered,
                 "rss_before_mb": round(r.watch.rss_before_mb, 1), "rss_peak_mb": round(r.watch.rss_peak_mb, 1),
                 "rss_after_mb": round(r.watch.rss_after_mb, 1)} if r.watch else {})} for r in rows]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz_bounds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the 60,000-letter word")
    parser.add_argument("--only", default="headers,words,descriptions", help="comma-separated cases")
    args = parser.parse_args(argv)

    async def go() -> None:
        with tempfile.TemporaryDirectory(prefix="hermes-bounds-") as tmp, \
                (Path(tmp) / "hub.log").open("w") as log:
            rows = await run_bounds(Path(tmp), log, args.quick, tuple(args.only.split(",")))
            print(render_bounds(rows))

    anyio.run(go)


if __name__ == "__main__":
    main()
