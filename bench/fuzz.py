"""Fuzz benchmark (issue 7): malformed and mutated JSON-RPC messages against a real hub process.

    python -m bench.fuzz [--quick] [--seed N] [--messages N]     (also: python -m bench fuzz)

Messages come from a seeded generator (``case(seed, index, era)``: the same pair gives the same
bytes, so every failure reproduces from the two numbers it prints): truncated JSON, wrong types,
unknown methods, huge ids, deep nesting, 10 MB strings, invalid UTF-8, batches, non-objects,
duplicate keys, stray responses and notifications, and some valid requests among them.

They go to ``hermes-hub serve --stdio`` (one line each; a ``ping`` after each marks where its
answers end) and to ``hermes-hub serve`` over HTTP (one POST each), for a 2025-11-25 host (after
``initialize``; over HTTP with its session and ``MCP-Protocol-Version``) and a 2026-07-28 host
(the ``_meta`` envelope; over HTTP its headers). The hub must never crash, must answer every
request-shaped message with a valid JSON-RPC response (an error for malformed ones, with id null
when the id cannot be read), must not answer notifications, over HTTP must answer malformed POSTs
with a 4xx and a JSON-RPC error body, and its RSS must stay bounded. Printed per transport and
era: messages/s, answers by error code, failures, and the hub's RSS before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from bench.proxy import free_port, kill_leftovers, stop_process, table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
ERAS = ("2025-11-25", "2026-07-28")
HUGE = 10 * 1024 * 1024  # the "10 MB string"
ANSWER_WAIT = 30.0  # one message's answers (a 10 MB echo through the child included)
MAX_LINE = 128 * 1024 * 1024
RSS_GROWTH_BOUND_MB = 300.0  # beyond this the hub holds on to what it was sent

# What the hub owes a message:
#   "reply"       a response with this message's id (result or error), or an error with id null
#   "error"       an error, with this message's id or id null
#   "null_error"  an error with id null and code -32700 (parse) or -32600 (invalid request)
#   "none"        nothing (a notification, or a response the host sent)
EXPECTS = ("reply", "error", "null_error", "none")


@dataclass(frozen=True)
class Case:
    seed: int
    index: int
    era: str
    kind: str
    data: bytes
    expect: str
    id: Any = None  # the id an answer must carry (``reply``/``error``), when it has a valid one
    method: str | None = None  # for HTTP's routing headers

    @property
    def where(self) -> str:
        return f"seed {self.seed} case {self.index} ({self.era}, {self.kind})"


# -- the generator ----------------------------------------------------------------------------------

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
BASES: list[tuple[str, dict[str, Any] | None]] = [
    ("ping", None),
    ("tools/list", {}),
    ("tools/list", {"cursor": "nope"}),
    ("tools/call", {"name": "echo_echo", "arguments": {"text": "hi"}}),
    ("tools/call", {"name": "hermes_hub_status", "arguments": {}}),
    ("tools/call", {"name": "no_such_tool", "arguments": {}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "hub://hermes/status"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "nope", "arguments": {"a": "b"}}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}}),
    ("resources/subscribe", {"uri": "hub://hermes/status"}),
    ("logging/setLevel", {"level": "debug"}),
]
NOTIFICATIONS = [("notifications/initialized", None), ("notifications/cancelled", {"requestId": 12345}),
                 ("notifications/progress", {"progressToken": "t", "progress": 1}),
                 ("notifications/roots/list_changed", None), ("notifications/whatever", {"x": 1})]
WRONG = [0, -1, 1.5, True, None, [], [1, "a"], {}, {"a": {"b": 1}}, "", "text", 2**70]
KINDS = [  # (kind, weight)
    ("valid", 6), ("truncated", 12), ("invalid_utf8", 8), ("wrong_type", 18), ("unknown_method", 8),
    ("huge_id", 6), ("deep_nesting", 7), ("huge_string", 0.15), ("non_object", 6), ("batch", 3),
    ("missing_field", 6), ("duplicate_keys", 3), ("extra_fields", 4), ("control_chars", 3),
    ("client_response", 4), ("notification", 6),
]


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _request(rng: random.Random, era: str, msg_id: Any) -> tuple[dict[str, Any], str]:
    method, params = rng.choice(BASES)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    params = json.loads(json.dumps(params)) if params is not None else None
    if era == ERAS[1]:
        params = {**(params or {}), "_meta": dict(ENVELOPE)}
    if params is not None:
        msg["params"] = params
    return msg, method


DEEP = "@@deep@@"


def _nested(depth: int) -> bytes:
    """``depth`` levels of alternating objects and arrays around a 1, as JSON text."""
    opening = b"".join(b"[" if i % 2 else b'{"k":' for i in range(depth))
    closing = b"".join(b"]" if i % 2 else b"}" for i in reversed(range(depth)))
    return opening + b"1" + closing


def case(seed: int, index: int, era: str, kind: str | None = None) -> Case:
    """Message ``index`` of ``seed`` for a host of ``era``; ``kind`` forces a kind (else drawn)."""
    rng = random.Random(f"{seed}:{index}:{era}")
    kind = kind or rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
    msg_id: Any = rng.choice([index, f"c{index}", -index - 1])
    msg, method = _request(rng, era, msg_id)

    def made(data: bytes, expect: str, the_id: Any = msg_id, the_method: str | None = method) -> Case:
        return Case(seed, index, era, kind, data, expect, the_id if expect in ("reply", "error") else None, the_method)

    if kind == "valid":
        return made(_dumps(msg), "reply")
    if kind == "truncated":
        full = _dumps(msg)
        return made(full[:rng.randrange(1, len(full))], "null_error")
    if kind == "invalid_utf8":
        full = bytearray(_dumps(msg))
        for _ in range(rng.randint(1, 3)):
            full.insert(rng.randrange(len(full) + 1), rng.choice([0x80, 0xBF, 0xC0, 0xFE, 0xFF]))
        return made(bytes(full), "null_error")
    if kind == "wrong_type":
        path = rng.choice(["jsonrpc", "id", "method", "params", "params.name", "params.arguments", "params.cursor",
                           "params.uri", "params._meta", "params.arguments.text", "params.level"])
        value = rng.choice(WRONG)
        if "." in path:
            msg.setdefault("params", {})[path.split(".", 1)[1].split(".")[0]] = value \
                if path.count(".") == 1 else {"text": value}
            return made(_dumps(msg), "reply")
        msg[path] = value
        if path == "id":
            valid = isinstance(value, int | str) and not isinstance(value, bool)
            return made(_dumps(msg), "reply" if valid else "null_error" if value is not None else "error", value)
        if path == "params":
            return made(_dumps(msg), "reply")
        return made(_dumps(msg), "error", the_method=value if isinstance(value, str) else None)
    if kind == "unknown_method":
        name = rng.choice(["", "rpc.discover", "tools/lists", "x" * rng.randint(1, 5000), "méthode/ünïcode",
                           "tools/call/extra", "notifications/initialized/x", "\u0000", "../../etc/passwd"])
        msg["method"] = name
        return made(_dumps(msg), "error", the_method=name)
    if kind == "huge_id":
        the_id: Any = rng.choice([int("9" * rng.randint(19, 4000)), -int("9" * rng.randint(19, 300)),
                                  "i" * rng.randint(1000, 200_000), 2**63, -(2**63) - 1])
        msg["id"] = the_id
        return made(_dumps(msg), "reply", the_id)
    if kind == "deep_nesting":
        depth = rng.choice([10, 100, 600, 1000, 5000, 100_000])
        where = rng.choice(["params", "arguments", "id"])
        if where == "id":
            msg["id"] = DEEP
        elif where == "params":
            msg["params"] = {"nested": DEEP, **(msg.get("params") or {})}
        else:
            msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo",
                                                   "arguments": {"text": "x", "deep": DEEP}})
        data = _dumps(msg).replace(_dumps(DEEP), _nested(depth))  # too deep for json.dumps itself
        return made(data, "null_error" if where == "id" else "reply", the_method=msg["method"])
    if kind == "huge_string":
        target = rng.choice(["text", "method", "id", "tool"])
        big = "z" * HUGE
        if target == "method":
            msg["method"] = big
            return made(_dumps(msg), "error", the_method=None)
        if target == "id":
            msg["id"] = big
            return made(_dumps(msg), "reply", big)
        msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo" if target == "text"
                                                else big, "arguments": {"text": big if target == "text" else "x"}})
        return made(_dumps(msg), "reply", the_method="tools/call")
    if kind == "non_object":
        return made(_dumps(rng.choice([1, -3.5, "tools/list", None, True, [], {}])), "null_error")
    if kind == "batch":
        return made(_dumps([msg, _request(rng, era, msg_id)[0]][: rng.randint(1, 2)]), "null_error")
    if kind == "missing_field":
        drop = rng.choice(["jsonrpc", "method", "id", "params.name", "params"])
        if drop == "id":
            msg.pop("id")
            return made(_dumps(msg), "none")
        if drop.startswith("params"):
            if drop == "params":
                msg.pop("params", None)
            else:
                (msg.get("params") or {}).pop("name", None)
            return made(_dumps(msg), "reply")
        msg.pop(drop)
        if drop == "method":
            return made(_dumps(msg), "error", the_method=None)
        return made(_dumps(msg), "error")
    if kind == "duplicate_keys":
        body = _dumps(msg)
        return made(b'{"id":' + _dumps(rng.choice([[], "dup", 7])) + b"," + body[1:], "reply")
    if kind == "extra_fields":
        msg[rng.choice(["extra", "result", "error", "jsonrpc2", "ID", "Method"])] = rng.choice(WRONG)
        return made(_dumps(msg), "reply")  # with a method, a stray "result" or "error" is ignored
    if kind == "control_chars":
        junk = "".join(chr(rng.randrange(0, 32)) for _ in range(rng.randint(1, 40))) + "\ud800\u2028\ufeff"
        msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo",
                                               "arguments": {"text": junk}})
        # escaped (ensure_ascii): the lone surrogate stays valid UTF-8 on the wire
        return made(json.dumps(msg, separators=(",", ":")).encode(), "reply", the_method="tools/call")
    if kind == "client_response":
        if rng.random() < 0.5:
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": rng.choice([{}, {"x": [1]}])}
        else:
            body = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": rng.choice([-32603, 1, 0]), "message": "m"}}
        return made(_dumps(body), "none")
    # notification: valid or mutated, never answered
    name, params = rng.choice(NOTIFICATIONS)
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": name}
    if params is not None:
        note["params"] = params if rng.random() < 0.6 else rng.choice(WRONG[:-1])
    return made(_dumps(note), "none", the_method=name)


def cases(seed: int, count: int, era: str) -> Iterator[Case]:
    """``count`` messages; the first few of every run include one of each rare kind."""
    forced = ["huge_string", "deep_nesting", "huge_id", "invalid_utf8", "batch"]
    for i in range(count):
        yield case(seed, i, era, forced[i] if i < len(forced) and count >= 50 else None)


# -- judging answers --------------------------------------------------------------------------------


def judge(c: Case, answers: list[Any]) -> str | None:
    """Why ``answers`` (decoded JSON values) are wrong for ``c``, or None if they are right."""
    for a in answers:
        if not isinstance(a, dict) or a.get("jsonrpc") != "2.0" or "id" not in a or ("result" in a) == ("error" in a):
            return f"not a JSON-RPC response: {json.dumps(a)[:300]}"
        if "error" in a:
            err = a["error"]
            if not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
                return f"malformed error object: {json.dumps(a)[:300]}"
    if c.expect == "none":
        return f"answered a message that needs no answer: {json.dumps(answers)[:300]}" if answers else None
    if len(answers) != 1:
        return f"expected one answer, got {len(answers)}: {json.dumps(answers)[:300]}"
    a = answers[0]
    if c.expect == "null_error":
        if a["id"] is not None or "error" not in a or a["error"]["code"] not in (-32700, -32600):
            return f"expected an error with id null (-32700/-32600), got {json.dumps(a)[:300]}"
        return None
    if a["id"] is None:
        return None if "error" in a else f"a result with id null: {json.dumps(a)[:300]}"
    if a["id"] != c.id:
        return f"answer carries id {json.dumps(a['id'])[:80]}, expected {json.dumps(c.id)[:80]}"
    if c.expect == "error" and "error" not in a:
        return f"expected an error, got a result: {json.dumps(a)[:300]}"
    return None


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


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


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
        await self.send(_dumps(ping))
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
            await peer.send(_dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}))
            with anyio.fail_after(60):
                await peer.out.receive_until(b"\n", MAX_LINE)
            await peer.send(_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
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
async def http_hub(tmp: Path, log: TextIO) -> AsyncIterator[tuple[str, Process]]:
    port = free_port()
    proc = await anyio.open_process([sys.executable, "-m", "hermes_hub", "serve", "--config", str(_hub_config(tmp)),
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
        r = await self.http.post(self.url, headers=self.headers, content=_dumps({
            "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": self.era, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}))
        r.raise_for_status()
        self.headers["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        await self.http.post(self.url, headers=self.headers,
                             content=_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

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
    print(render(reports), file=out)
    doc = {"benchmark": "fuzz", "seed": seed, "per_era": per_era, "seconds": round(time.perf_counter() - started, 1),
           "reports": [{"transport": r.transport, "era": r.era, "messages": r.messages,
                        "messages_per_s": round(r.messages / r.seconds, 1) if r.seconds else None,
                        "codes": dict(r.codes), "failures": r.failures, "rss_before_mb": round(r.rss_before_mb, 1),
                        "rss_after_mb": round(r.rss_after_mb, 1), "hub_alive": r.hub_alive,
                        "slowest_s": round(r.slowest[0], 3), "slowest_case": r.slowest[1]} for r in reports]}
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
