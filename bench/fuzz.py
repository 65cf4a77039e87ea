"""Fuzz benchmark (issue 7): malformed and mutated JSON-RPC messages against a real hub process.

    python -m bench.fuzz [--quick] [--seed N] [--messages N]     (also: python -m bench fuzz)

Messages come from a seeded generator (``case(seed, index, era)`` in ``bench/fuzz_cases.py``: the
same values give the same bytes, so every failure reproduces from what it prints): truncated JSON,
wrong types, unknown methods, huge ids, deep nesting, 10 MB strings, invalid UTF-8, batches,
non-objects, duplicate keys, stray responses and notifications, and some valid requests among them.

They go to ``hermes-hub serve --stdio`` (one line each; a ``ping`` after each marks where its
answers end) and to ``hermes-hub serve`` over HTTP (one POST each), for a 2025-11-25 host (after
``initialize``; over HTTP with its session and ``MCP-Protocol-Version``) and a 2026-07-28 host
(the ``_meta`` envelope; over HTTP its headers). The hub must never crash, must answer every
request-shaped message with a valid JSON-RPC response (an error for malformed ones, with id null
when the id cannot be read), must not answer notifications, over HTTP must answer malformed POSTs
with a 4xx and a JSON-RPC error body, and its RSS must stay bounded. Printed per transport and
era: messages/s, answers by error code, failures, and the hub's RSS before and after.

Then the bounds round (issue 16, ``bench/fuzz_bounds.py``): 50 MB headers, tool searches for one
huge word, tool descriptions of millions of letters, each with ``/healthz`` probed and RSS sampled.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from bench.fuzz_bounds import as_json, render_bounds, rss_mb, run_bounds
from bench.fuzz_cases import ENVELOPE, ERAS, Case, case, cases, dumps, judge
from bench.proxy import free_port, kill_leftovers, stop_process, table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
ANSWER_WAIT = 30.0  # one message's answers (a 10 MB echo through the child included)
MAX_LINE = 128 * 1024 * 1024
RSS_GROWTH_BOUND_MB = 300.0  # beyond this the hub holds on to what it was sent

@dataclass
class Report:
    transport: str
    era: str
    messages: int = 0
    seconds: float = 0.0
    codes: Counter[str] = field(default_factory=Counter)  # "result", "-32700", ..., "http 413"...
    failures: list[str] = field(default_factory=list)
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    hub_alive: bool = True
    slowest: tuple[float, str] = (0.0, "")  # seconds, case

    def note(self, c: Case, answers: list[Any], why: str | None, took: float = 0.0) -> None:
        self.messages += 1
        self.slowest = max(self.slowest, (took, c.where))
        for a in answers:
            if isinstance(a, dict):
                self.codes["result" if "result" in a else str((a.get("error") or {}).get("code"))] += 1
        if not answers:
            self.codes["no answer"] += 1
        if why:
            self.failures.append(f"{c.where}: {why}")


# -- stdio ------------------------------------------------------------------------------------------


def _hub_config(tmp: Path) -> Path:
    path = tmp / "hub.json"
    path.write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": ["-m", "bench.echo_server"],
                                                       "cwd": str(ROOT), "timeout": 20}}}))
    return path


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HERMES_DATA_DIR": str(tmp / "data")}  # never the user's own store


@asynccontextmanager
async def stdio_hub(tmp: Path, log: TextIO) -> AsyncIterator[Process]:
    proc = await anyio.open_process([sys.executable, "-m", "hermes_hub", "serve", "--stdio", "--config",
                                     str(_hub_config(tmp))], cwd=ROOT, env=_env(tmp), stderr=log,
                                    start_new_session=True)
    try:
        yield proc
    finally:
        children = [int(p) for p in _children(proc.pid)]
        await stop_process(proc)
        kill_leftovers(children)


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


class StdioPeer:
    def __init__(self, proc: Process) -> None:
        assert proc.stdin and proc.stdout
        self.proc, self.out = proc, BufferedByteReceiveStream(proc.stdout)
        self.sync = 0

    async def send(self, data: bytes) -> None:
        assert self.proc.stdin
        await self.proc.stdin.send(data + b"\n")

    async def answers(self, c: Case) -> list[Any]:
        """Send ``c`` and a ``ping``; collect what comes back until the ping's answer (and ``c``'s)."""
        self.sync += 1
        marker = f"sync-{self.sync}"
        ping: dict[str, Any] = {"jsonrpc": "2.0", "id": marker, "method": "ping"}
        if c.era == ERAS[1]:
            ping["params"] = {"_meta": ENVELOPE}
        await self.send(c.data)
        await self.send(dumps(ping))
        got: list[Any] = []
        synced = False
        with anyio.fail_after(ANSWER_WAIT):
            while not (synced and (c.expect not in ("reply", "error") or c.id is None or any(
                    isinstance(a, dict) and a.get("id") in (c.id, None) for a in got))):
                line = await self.out.receive_until(b"\n", MAX_LINE)
                try:
                    value = json.loads(line)
                except ValueError:
                    got.append(f"<not JSON: {line[:200]!r}>")
                    continue
                if isinstance(value, dict) and value.get("id") == marker:
                    synced = True
                elif not (isinstance(value, dict) and "method" in value):  # the hub's own notices
                    got.append(value)
        return got


async def fuzz_stdio(seed: int, count: int, era: str, tmp: Path, log: TextIO) -> Report:
    report = Report("stdio", era)
    async with stdio_hub(tmp, log) as proc:
        peer = StdioPeer(proc)
        if era == ERAS[0]:
            await peer.send(dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}))
            with anyio.fail_after(60):
                await peer.out.receive_until(b"\n", MAX_LINE)
            await peer.send(dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        else:
            with anyio.fail_after(60):  # the hub answers once its servers have settled
                await peer.answers(case(seed, -1, era, "valid"))
        report.rss_before_mb = rss_mb(proc.pid)
        started = time.perf_counter()
        for c in cases(seed, count, era):
            began = time.perf_counter()
            try:
                got = await peer.answers(c)
            except TimeoutError:
                report.note(c, [], f"no answer within {ANSWER_WAIT:g}s")
                break
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                report.note(c, [], "the hub closed its stdout (crashed?)")
                break
            report.note(c, got, judge(c, got), time.perf_counter() - began)
        report.seconds = time.perf_counter() - started
        report.rss_after_mb = rss_mb(proc.pid) if proc.returncode is None else float("nan")
        report.hub_alive = proc.returncode is None
        if not report.hub_alive:
            report.failures.append(f"seed {seed}: the hub exited with {proc.returncode}")
    return report


# -- HTTP -------------------------------------------------------------------------------------------


@asynccontextmanager
async def http_hub(tmp: Path, log: TextIO, config: Path | None = None) -> AsyncIterator[tuple[str, Process]]:
    """``hermes-hub serve`` over ``config`` (default: the echo server alone), once /readyz is 200."""
    port = free_port()
    config = config or _hub_config(tmp)
    proc = await anyio.open_process([sys.executable, "-m", "hermes_hub", "serve", "--config", str(config),
                                     "--port", str(port)], cwd=ROOT, env=_env(tmp), stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=log, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx2.AsyncClient(timeout=2) as http:
            with anyio.fail_after(60):
                while True:
                    if proc.returncode is not None:
                        raise RuntimeError(f"the hub exited with {proc.returncode}; see {log.name}")
                    try:
                        if (await http.get(f"{base}/readyz")).status_code == 200:
                            break
                    except httpx2.TransportError:
                        pass
                    await anyio.sleep(0.05)  # poll interval only; bounded above
        yield f"{base}/mcp", proc
    finally:
        children = [int(p) for p in _children(proc.pid)]
        await stop_process(proc)
        kill_leftovers(children)


def _decode_body(r: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages in a response body: one JSON value, or the ``data:`` lines of SSE."""
    if not r.content:
        return []
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return [json.loads(r.content)]


def judge_http(c: Case, r: httpx2.Response) -> tuple[list[Any], str | None]:
    try:
        answers = _decode_body(r)
    except ValueError:
        return [], f"HTTP {r.status_code} with a body that is not JSON-RPC: {r.text[:200]!r}"
    if r.status_code >= 500:
        return answers, f"HTTP {r.status_code}: {r.text[:300]!r}"
    if 400 <= r.status_code < 500:
        if len(answers) != 1 or not isinstance(answers[0], dict) or "error" not in answers[0]:
            return answers, f"HTTP {r.status_code} without a JSON-RPC error body: {r.text[:200]!r}"
        if c.expect == "none" or answers[0].get("id") is None:
            return answers, judge(Case(c.seed, c.index, c.era, c.kind, b"", "error"), answers)
        return answers, judge(c, answers)
    if c.expect == "none":
        return answers, None if r.status_code == 202 and not answers else f"HTTP {r.status_code} for a " \
            f"notification: {r.text[:200]!r}"
    if c.expect == "null_error":
        return answers, f"HTTP {r.status_code} for a malformed message (expected 4xx): {r.text[:200]!r}"
    return answers, judge(c, [a for a in answers if not (isinstance(a, dict) and "method" in a)])


def _ascii_header(value: str) -> str | None:
    return value if value.isascii() and value.isprintable() and len(value) < 4096 else None


class HttpPeer:
    def __init__(self, http: httpx2.AsyncClient, url: str, era: str) -> None:
        self.http, self.url, self.era = http, url, era
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                        "MCP-Protocol-Version": era}

    async def start(self) -> None:
        if self.era != ERAS[0]:
            return
        r = await self.http.post(self.url, headers=self.headers, content=dumps({
            "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": self.era, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}))
        r.raise_for_status()
        self.headers["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        await self.http.post(self.url, headers=self.headers,
                             content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def post(self, c: Case) -> httpx2.Response:
        headers = dict(self.headers)
        if self.era == ERAS[1] and c.method is not None and (m := _ascii_header(c.method)):
            headers["Mcp-Method"] = m
            if m == "tools/call" and (name := _name_of(c.data)):
                headers["Mcp-Name"] = name
        return await self.http.post(self.url, headers=headers, content=c.data)


def _name_of(data: bytes) -> str | None:
    try:
        name = json.loads(data).get("params", {}).get("name")
    except (ValueError, RecursionError, AttributeError):
        return None
    return _ascii_header(name) if isinstance(name, str) else None


async def fuzz_http(seed: int, count: int, era: str, tmp: Path, log: TextIO, workers: int = 4) -> Report:
    report = Report("http", era)
    async with http_hub(tmp, log) as (url, proc), httpx2.AsyncClient(timeout=ANSWER_WAIT) as http:
        peer = HttpPeer(http, url, era)
        await peer.start()
        report.rss_before_mb = rss_mb(proc.pid)
        todo = iter(cases(seed, count, era))
        started = time.perf_counter()

        async def worker() -> None:
            for c in todo:  # shared iterator: each case goes to one worker
                began = time.perf_counter()
                try:
                    r = await peer.post(c)
                except httpx2.HTTPError as e:  # the hub is gone or stuck: the next ones would fail alike
                    report.note(c, [], f"{type(e).__name__}: {e}")
                    return
                answers, why = judge_http(c, r)
                report.note(c, answers, why, time.perf_counter() - began)
                if 400 <= r.status_code < 500:
                    report.codes[f"http {r.status_code}"] += 1

        async with anyio.create_task_group() as tg:
            for _ in range(workers):
                tg.start_soon(worker)
        report.seconds = time.perf_counter() - started
        report.hub_alive = proc.returncode is None
        report.rss_after_mb = rss_mb(proc.pid) if report.hub_alive else float("nan")
        if not report.hub_alive:
            report.failures.append(f"seed {seed}: the hub exited with {proc.returncode}")
    return report


# -- report -----------------------------------------------------------------------------------------


def render(reports: list[Report]) -> str:
    rows = [[r.transport, r.era, str(r.messages), f"{r.messages / r.seconds:.0f}" if r.seconds else "-",
             str(len(r.failures)), f"{r.rss_before_mb:.0f}", f"{r.rss_after_mb:.0f}",
             "yes" if r.hub_alive else "NO"] for r in reports]
    out = [table(["transport", "host era", "messages", "messages/s", "failures", "RSS before MB", "RSS after MB",
                  "hub alive"], rows), ""]
    for r in reports:
        out.append(f"{r.transport} {r.era} answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(r.codes.items())))
        out.append(f"  slowest: {r.slowest[0]:.2f} s, {r.slowest[1]}")
        out += [f"  FAIL {f}" for f in r.failures[:10]]
        if len(r.failures) > 10:
            out.append(f"  ... and {len(r.failures) - 10} more")
    return "\n".join(out)


async def run(quick: bool = False, out: TextIO = sys.stdout, seed: int = 7, messages: int | None = None
              ) -> dict[str, Any]:
    per_era = (messages or (1000 if quick else 10_000)) // len(ERAS)
    print(f"fuzz benchmark: {per_era * len(ERAS)} messages per transport (seed {seed}) ...", file=out, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    reports = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hermes-fuzz-") as tmp, (RESULTS / "fuzz-hub.log").open("w") as log:
        for transport, fuzz in (("stdio", fuzz_stdio), ("http", fuzz_http)):
            for era in ERAS:
                work = Path(tmp) / f"{transport}-{era}"
                work.mkdir()
                reports.append(await fuzz(seed, per_era, era, work, log))
                print(f"  {transport} {era}: {reports[-1].messages} messages, {len(reports[-1].failures)} failures",
                      file=out, flush=True)
        print("  bounds: oversized headers, huge words, huge descriptions ...", file=out, flush=True)
        work = Path(tmp) / "bounds"
        work.mkdir()
        bounds = await run_bounds(work, log, quick)
    print(render(reports), file=out)
    print("\nbounds round (issue 16):\n" + render_bounds(bounds), file=out)
    doc = {"benchmark": "fuzz", "seed": seed, "per_era": per_era, "seconds": round(time.perf_counter() - started, 1),
           "reports": [{"transport": r.transport, "era": r.era, "messages": r.messages,
                        "messages_per_s": round(r.messages / r.seconds, 1) if r.seconds else None,
                        "codes": dict(r.codes), "failures": r.failures, "rss_before_mb": round(r.rss_before_mb, 1),
                        "rss_after_mb": round(r.rss_after_mb, 1), "hub_alive": r.hub_alive,
                        "slowest_s": round(r.slowest[0], 3), "slowest_case": r.slowest[1]} for r in reports],
           "bounds": as_json(bounds)}
    path = RESULTS / "fuzz.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 messages per transport instead of 10,000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--messages", type=int, help="messages per transport (split between the two host eras)")
    args = parser.parse_args(argv)
    anyio.run(lambda: run(args.quick, seed=args.seed, messages=args.messages))


if __name__ == "__main__":
    main()
