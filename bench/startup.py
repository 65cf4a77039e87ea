"""Start-up benchmark (issues 32 and 33): how soon the hub and the CLI answer, from a cold process.

    python -m bench.startup [--quick]        (also: python -m bench startup)

Every figure is a fresh process, timed from spawn, the median of N runs, beside a baseline measured
in the same run: the interpreter starting (``python -c pass``) and importing what the stdio hub
imports (``import hermes_hub.app.hub``), each until it prints a line; the hub cannot answer before
those. CLI commands are timed until they exit.

* stdio first answer: ``hermes-hub serve --stdio`` as a host spawns it, until it answers Claude Code's
  ``server/discover`` probe; with no servers, and with the issue's case (one server that needs 10 s to
  start, ``bench.idle_server --start-delay 10``, and one that never answers). Then the first
  ``tools/list``, held at most ``hub.first_list_wait`` (1 s) for servers still starting. Target: the
  first answer within 0.5 s of the import baseline, whatever the servers do.
* CLI: ``--help`` and ``--version`` (target <= 0.3 s), and ``check`` (in-process: reads the config and
  the store, starts no server) on the bundled hub.json.
* Commands beside a serving hub (issue 33 item 2): with ``hermes-hub serve`` up on a config of the demo
  notes server, ``servers``, ``tools``, ``call`` and ``memory recall`` find it and ask it (target <= 1 s
  each), beside the same command building the hub in its own process (``--in-process``; for recall,
  ``--user``, which opens the store and the embedder here). For the in-process ones, also how soon the
  first server is spawned (target <= 3 s): the notes server's command line records when it starts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import anyio

from bench.proxy import table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
HUB = [sys.executable, "-m", "hermes_hub"]
SLOW = {"command": sys.executable, "args": ["-m", "bench.idle_server", "--start-delay", "10"], "cwd": str(ROOT)}
DEAD = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.buffer.read()"]}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1"},
    "io.modelcontextprotocol/clientCapabilities": {}}}}
TARGET_SLACK = 0.5  # seconds the stdio hub may take past importing itself
TARGET_HELP = 0.3
TARGET_SERVED = 1.0  # a command answered by the serving hub
TARGET_FIRST_SPAWN = 3.0  # an in-process command, spawn -> its first server spawned
WAIT = 30.0  # bound of every wait; a miss is a crash, not a slow result


def _until_printed(code: str, env: dict[str, str]) -> float:
    """Spawn -> the first line a ``python -c`` prints: an import without the interpreter's exit (tearing
    down that many modules takes a few hundred ms more, which no host waits for)."""
    start = time.perf_counter()
    with subprocess.Popen([sys.executable, "-c", f"{code}; print('ok', flush=True)"], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()
        took = time.perf_counter() - start
        proc.wait(WAIT)
    return took


def _seconds(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, timeout=WAIT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


async def _first_answers(config: Path, env: dict[str, str]) -> tuple[float, float]:
    """Spawn -> the answer to server/discover, and the first tools/list's own time, in seconds."""
    start = time.perf_counter()
    argv = [*HUB, "serve", "--stdio", "--config", str(config)]
    async with await anyio.open_process(argv, cwd=ROOT, env=env, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        buffer = b""

        async def answer(request_id: int) -> float:
            nonlocal buffer
            with anyio.fail_after(WAIT):
                while True:
                    while b"\n" not in buffer:
                        buffer += await proc.stdout.receive()
                    line, buffer = buffer.split(b"\n", 1)
                    message = json.loads(line)
                    if message.get("id") == request_id and "method" not in message:
                        return time.perf_counter()

        await proc.stdin.send((json.dumps(DISCOVER) + "\n").encode())
        discovered = await answer(1) - start
        asked = time.perf_counter()
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": DISCOVER["params"]}
        await proc.stdin.send((json.dumps(listing) + "\n").encode())
        listed = await answer(2) - asked
        await proc.stdin.aclose()
        with anyio.fail_after(WAIT):
            await proc.wait()
    return discovered, listed


async def _served_commands(folder: Path, env: dict[str, str], n: int) -> dict[str, dict[str, float]]:
    """Each command from spawn to exit while a hub serves its config, and the same built in-process."""
    from bench.proxy import free_port, http_process

    stamp = folder / "spawned"
    notes = (f'date +%s.%N >> {stamp}; HERMES_DEMO_DATA={folder / "demo"} exec {sys.executable} -m servers.notes')
    config = folder / "served.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": "sh", "args": ["-c", notes], "cwd": str(ROOT)}},
                                  "storage": {"url": f"sqlite:///{folder / 'served.db'}"}}))
    cli = [*HUB]
    commands = {
        "servers": ["servers", "--config", str(config)],
        "tools": ["tools", "--config", str(config)],
        "call": ["call", "notes_search_notes", "--args", '{"query": "milk"}', "--config", str(config)],
        "memory recall": ["memory", "recall", "milk", "--config", str(config)],
    }
    local = {"servers": ["--in-process"], "tools": ["--in-process"], "call": ["--in-process"],
             "memory recall": ["--user", os.environ.get("USER") or "bench"]}
    port = free_port()
    served_argv = [*cli, "serve", "--config", str(config), "--port", str(port)]
    with open(folder / "served.log", "w") as log:
        async with http_process(served_argv, f"http://127.0.0.1:{port}/readyz", lambda r: r.status_code == 200,
                                "the served hub", log):
            remember = ["call", "hermes_memory_remember", "--args", '{"text": "buy milk on Friday"}']
            _seconds([*cli, *remember, "--config", str(config)], env)  # one memory to recall; never timed
            out: dict[str, dict[str, float]] = {}
            for name, argv in commands.items():
                served = [_seconds([*cli, *argv], env) for _ in range(n)]
                here, first = [], []
                for _ in range(n):
                    stamp.write_text("")
                    began = time.time()
                    here.append(_seconds([*cli, *argv, *local[name]], env))
                    spawned = stamp.read_text().split()
                    if spawned:
                        first.append(float(spawned[0]) - began)
                out[name] = {"served_s": _median(served), "in_process_s": _median(here),
                             **({"first_spawn_s": _median(first)} if first else {})}
    return out


def _median(samples: list[float]) -> float:
    return round(statistics.median(samples), 3)


async def run(quick: bool = False, out: TextIO = sys.stdout) -> dict[str, Any]:
    n = 3 if quick else 7
    print(f"start-up benchmark ({'quick' if quick else 'full'}, median of {n}) ...", file=out, flush=True)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hermes-bench-startup-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "HERMES_DATA_DIR": str(folder / "data"), "HERMES_DEMO_DATA": str(folder / "demo")}
        empty, issue = folder / "empty.json", folder / "issue.json"
        empty.write_text(json.dumps({"mcpServers": {}}))
        issue.write_text(json.dumps({"mcpServers": {"slow": SLOW, "dead": DEAD}}))
        baseline = {
            "python -c pass": [_until_printed("pass", env) for _ in range(n)],
            "import the stdio hub": [_until_printed("import hermes_hub.app.hub, hermes_hub.app.serving.stdio", env)
                                     for _ in range(n)],
        }
        cli = {
            "hermes-hub --help": [_seconds([*HUB, "--help"], env) for _ in range(n)],
            "hermes-hub --version": [_seconds([*HUB, "--version"], env) for _ in range(n)],
            "hermes-hub check hub.json": [_seconds([*HUB, "check", "hub.json"], env) for _ in range(n)],
        }
        stdio: dict[str, tuple[list[float], list[float]]] = {}
        for label, config in (("no servers", empty), ("a 10 s server and a dead one", issue)):
            runs = [await _first_answers(config, env) for _ in range(n)]
            stdio[label] = ([d for d, _ in runs], [listed for _, listed in runs])
        served = await _served_commands(folder, env, n)
    imported = _median(baseline["import the stdio hub"])
    doc: dict[str, Any] = {
        "baseline_s": {k: _median(v) for k, v in baseline.items()},
        "cli_s": {k: _median(v) for k, v in cli.items()},
        "stdio": {k: {"discover_s": _median(d), "first_list_s": _median(listed),
                      "past_import_s": round(_median(d) - imported, 3)} for k, (d, listed) in stdio.items()},
        "beside_a_served_hub": served,
        "targets": {"stdio_past_import_s": TARGET_SLACK, "help_s": TARGET_HELP, "served_s": TARGET_SERVED,
                    "first_spawn_s": TARGET_FIRST_SPAWN},
    }
    rows = [[k, f"{v * 1000:.0f}", "1.00" if k == "import the stdio hub" else f"{v / imported:.2f}"]
            for k, v in {**doc["baseline_s"], **doc["cli_s"]}.items()]
    for k, v in doc["stdio"].items():
        discover = v["discover_s"]
        rows.append([f"stdio discover answered ({k})", f"{discover * 1000:.0f}", f"{discover / imported:.2f}"])
        rows.append([f"  then first tools/list ({k})", f"{v['first_list_s'] * 1000:.0f}", ""])
    print(table(["from spawn", "median ms", "÷ import ratio"], rows), file=out)
    print("\nbeside a hub serving the same hub.json (spawn -> exit; first server: spawn -> its spawn)", file=out)
    print(table(["command", "asks the served hub ms", "in-process ms", "÷ ratio", "in-process first server ms"],
                [[k, f"{v['served_s'] * 1000:.0f}", f"{v['in_process_s'] * 1000:.0f}",
                  f"{v['served_s'] / v['in_process_s']:.2f}",
                  f"{v['first_spawn_s'] * 1000:.0f}" if "first_spawn_s" in v else "none started"]
                 for k, v in served.items()]), file=out)
    slowest = max(v["served_s"] for v in served.values())
    spawn = max((v["first_spawn_s"] for v in served.values() if "first_spawn_s" in v), default=0.0)
    print(f"slowest served answer {slowest * 1000:.0f} ms (target <= {TARGET_SERVED * 1000:.0f} ms: "
          f"{'met' if slowest <= TARGET_SERVED else 'MISSED'}); first server spawned in-process after "
          f"{spawn * 1000:.0f} ms at most (target <= {TARGET_FIRST_SPAWN * 1000:.0f} ms: "
          f"{'met' if spawn <= TARGET_FIRST_SPAWN else 'MISSED'})", file=out)
    worst = max(v["past_import_s"] for v in doc["stdio"].values())
    helps = max(doc["cli_s"]["hermes-hub --help"], doc["cli_s"]["hermes-hub --version"])
    print(f"\nstdio first answer past the import: {worst * 1000:.0f} ms (target <= {TARGET_SLACK * 1000:.0f} ms: "
          f"{'met' if worst <= TARGET_SLACK else 'MISSED'}); --help/--version {helps * 1000:.0f} ms "
          f"(target <= {TARGET_HELP * 1000:.0f} ms: {'met' if helps <= TARGET_HELP else 'MISSED'})", file=out)
    doc["seconds"] = round(time.perf_counter() - began, 1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "startup.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path} ({doc['seconds']} s)", file=out)
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs of each instead of 7")
    anyio.run(run, parser.parse_args().quick)


if __name__ == "__main__":
    main()
