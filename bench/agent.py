"""Agent loop benchmark (issue 9): what one round of ``hermes_agent_run`` costs beyond its tool call.

    python -m bench.agent [--quick] [--profile]        (also: python -m bench agent)

A real hub (in this process, as ``hermes-hub serve`` builds it) over one stdio child,
``bench.echo_server --tools 99``: 100 downstream tools in the catalog (plus the hub's own). The model is
``Instant``, a provider with no latency: for ``rounds`` requests it asks for ``echo_echo`` with a new
text each time (so the repeat breaker never fires), then answers. The loop is driven through
``hermes_hub.core.agent.loop.Agent.run`` with the local user's context, as the ``hermes_agent_run`` tool does.

* direct: the same ``echo_echo`` calls through ``Catalog.call_tool`` (validation, routing, audit: what
  the agent's calls go through), one at a time. Per call.
* agent, per round: ``(T(run of K rounds) - T(run of 1 round)) / (K - 1)``: the marginal cost of a round
  (a model request, a tool call and the loop's bookkeeping), without the run's fixed costs.
* overhead per round = agent per round - direct per call; ratio = agent per round / direct per call.
  Target: overhead <= 3 ms at 100 tools.
* fixed cost of a run: ``T(run of 1 round)`` - one round: session, lock, listing and offering the tools,
  the context budget, writing the messages and the trace.

Direct blocks and runs alternate, so noise from other work on the machine hits both alike. With
``--profile``, pyinstrument (``pip install pyinstrument``; cProfile otherwise) records more K-round
runs and prints where their time goes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client

from bench.proxy import table
from hermes_hub.core.agent.loop import Agent
from hermes_hub.core.agent.profiles import resolve
from hermes_hub.infra.call import CallContext
from hermes_hub.app.hub import Hub
from hermes_hub.infra.models import Message, Reply, ToolCall, ToolSpec, Usage

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
TARGET_OVERHEAD_MS = 3.0
TOOL = "echo_echo"
WAIT = 120.0  # bound of every wait; a miss is a crash, not a slow result


class Instant:
    """A model with no latency: ``rounds`` turns of ``width`` tool calls to ``tool`` (a new text each), then an
    answer. With ``width`` > 1 the calls of a turn run at once (``agent.parallel_tools`` names the tool)."""

    name = "bench:instant"

    def __init__(self, tool: str, width: int = 1) -> None:
        self.tool, self.left, self.n, self.width = tool, 0, 0, width

    def script(self, rounds: int) -> None:
        self.left = rounds

    async def complete(self, messages: list[Message], *, system: str | None = None, tools: Sequence[ToolSpec] = (),
                       max_tokens: int = 1024, json_output: bool = False, temperature: float | None = None,
                       top_p: float | None = None) -> Reply:
        if self.left <= 0:
            return Reply("done", (), "end", Usage(), "instant")
        self.left -= 1
        self.n += 1
        calls = tuple(ToolCall(f"c{self.n}_{i}", self.tool, {"text": f"r{self.n}_{i}"}) for i in range(self.width))
        return Reply("", calls, "tool_use", Usage(), "instant")

    async def aclose(self) -> None:
        """Nothing to release."""


def _config(folder: Path, tools: int, rounds: int) -> Path:
    echo = {"command": sys.executable, "args": ["-m", "bench.echo_server", "--tools", str(tools - 1)],
            "cwd": str(ROOT)}
    cfg = folder / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {"echo": echo}, "storage": {"url": f"sqlite:///{folder}/hub.db"},
                               "memory": {"embedder": "none"},  # recall stays lexical: no model load, no CPU
                               "agent": {"max_rounds": rounds + 1, "parallel_tools": [TOOL]}}))
    return cfg


class Routes:
    """The two ways of making the same calls: ``direct`` (K tool calls) and ``run`` (an agent run of K rounds)."""

    name: str

    async def direct(self, calls: int, start: int) -> float: ...

    async def run(self, rounds: int) -> float: ...


class Loop(Routes):
    """In process: ``Catalog.call_tool`` vs ``Agent.run``, the loop alone, behind the hub's run gate. With
    ``width`` > 1, each round's calls run at once, and so do the direct calls they are compared with."""

    def __init__(self, hub: Hub, model: Instant) -> None:
        self.hub, self.model, self.ctx = hub, model, CallContext(hub.local)
        self.agent = Agent(hub.catalog, hub.sessions, None, model, own_tools="hermes_agent", gate=hub.run_gate)
        self.profile = resolve(hub.config, "default")
        self.name = "loop (Agent.run)" if model.width == 1 else f"loop, {model.width} calls a round at once"

    async def direct(self, calls: int, start: int) -> float:
        async def one(text: str) -> None:
            result = await self.hub.catalog.call_tool(TOOL, {"text": text}, self.ctx)
            assert not result.is_error, result

        t0 = time.perf_counter()
        for i in range(calls):
            if self.model.width == 1:
                await one(f"d{start + i}")
                continue
            async with anyio.create_task_group() as tg:
                for j in range(self.model.width):
                    tg.start_soon(one, f"d{start + i}_{j}")
        return time.perf_counter() - t0

    async def run(self, rounds: int) -> float:
        self.model.script(rounds)
        t0 = time.perf_counter()
        result = await self.agent.run("bench", self.profile, self.ctx)
        took = time.perf_counter() - t0
        assert (result.stop_reason, len(result.tool_calls)) == ("answered", rounds * self.model.width), \
            result.structured()
        assert not any(c.is_error for c in result.tool_calls), result.structured()
        return took


class Host(Routes):
    """Through MCP, as a host sees it (an in-memory handshake-era ``Client`` with a progress token, so the
    run sends its two progress notifications a round): ``tools/call echo_echo`` vs ``hermes_agent_run``."""

    name = "host (hermes_agent_run)"

    def __init__(self, client: Client, model: Instant) -> None:
        self.client, self.model, self.notes = client, model, 0

    async def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.notes += 1

    async def direct(self, calls: int, start: int) -> float:
        t0 = time.perf_counter()
        for i in range(calls):
            result = await self.client.call_tool(TOOL, {"text": f"h{start + i}"}, progress_callback=self._progress)
            assert not result.is_error, result
        return time.perf_counter() - t0

    async def run(self, rounds: int) -> float:
        self.model.script(rounds)
        t0 = time.perf_counter()
        result = await self.client.call_tool("hermes_agent_run", {"task": "bench"}, progress_callback=self._progress)
        took = time.perf_counter() - t0
        out = result.structured_content or {}
        assert (out.get("stop_reason"), len(out.get("tool_calls", []))) == ("answered", rounds), result
        return took


async def _compare(route: Routes, tools: int, offered: int, rounds: int, blocks: int, out: TextIO) -> dict[str, Any]:
    with anyio.fail_after(WAIT):  # warm-up: connections, caches, the first session rows
        await route.direct(rounds, 0)
        await route.run(rounds)
        await route.run(1)
    direct, long_runs, short_runs = [], [], []
    for b in range(blocks):
        with anyio.fail_after(WAIT):
            for step in (("d", "k", "1") if b % 2 == 0 else ("1", "k", "d")):  # order flipped each block
                if step == "d":
                    direct.append(await route.direct(rounds, (b + 1) * rounds) / rounds)
                elif step == "k":
                    long_runs.append(await route.run(rounds))
                else:
                    short_runs.append(await route.run(1))
    per_round = [(k - s) / (rounds - 1) for k, s in zip(long_runs, short_runs, strict=True)]
    row = {"route": route.name, "tools_downstream": tools, "tools_offered": offered, "rounds": rounds,
           "blocks": blocks, "direct_ms": 1000 * statistics.median(direct),
           "agent_round_ms": 1000 * statistics.median(per_round),
           "run_1_round_ms": 1000 * statistics.median(short_runs),
           "run_k_rounds_ms": 1000 * statistics.median(long_runs)}
    row["overhead_ms"] = row["agent_round_ms"] - row["direct_ms"]
    row["ratio"] = row["agent_round_ms"] / row["direct_ms"]
    row["fixed_ms"] = row["run_1_round_ms"] - row["agent_round_ms"]
    row["met"] = row["overhead_ms"] <= TARGET_OVERHEAD_MS
    print(f"  {tools} tools, {route.name}: direct {row['direct_ms']:.2f} ms/call, agent {row['agent_round_ms']:.2f} "
          f"ms/round", file=out, flush=True)
    return row


async def measure(tools: int, rounds: int, blocks: int, out: TextIO, profile_runs: int = 0) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        async with Hub.from_file(_config(Path(tmp), tools, rounds)) as hub:
            with anyio.fail_after(WAIT):
                assert await hub.wait_settled(WAIT), "the echo server did not start"
            names = [t.name for t in hub.catalog.list_tools(hub.local)]
            assert TOOL in names, f"{TOOL} is not in the catalog: {names[:5]}..."
            offered = sum(not n.startswith("hermes_agent") for n in names)
            model = Instant(TOOL)
            hub.services.model = model  # the hub's agent (hermes_agent_run) talks to the zero-latency model
            loop = Loop(hub, model)
            rows = [await _compare(loop, tools, offered, rounds, blocks, out)]
            model.width = 3  # three calls a round, run at once (agent.parallel_tools)
            rows.append(await _compare(Loop(hub, model), tools, offered, rounds, blocks, out))
            model.width = 1
            async with hub.client(mode="legacy") as client:
                rows.append(await _compare(Host(client, model), tools, offered, rounds, blocks, out))
            if profile_runs:
                await _profile(loop, rounds, profile_runs, out)
    return rows


async def _profile(loop: Loop, rounds: int, runs: int, out: TextIO) -> None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        Profiler = None  # noqa: N806
    if Profiler is not None:
        profiler = Profiler(interval=0.0002, async_mode="enabled")
        profiler.start()
    else:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with anyio.fail_after(WAIT * 5):
        for _ in range(runs):
            await loop.run(rounds)
    if Profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False), file=out)
    else:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)


def render(doc: dict[str, Any]) -> str:
    rows = [[r["route"], str(r["tools_downstream"]), str(r["tools_offered"]), f"{r['direct_ms']:.2f}", f"{r['agent_round_ms']:.2f}",
             f"{r['overhead_ms']:.2f}", f"{r['ratio']:.2f}", f"{r['fixed_ms']:.1f}", f"<= {TARGET_OVERHEAD_MS:g}",
             "PASS" if r["met"] else "MISS"] for r in doc["rows"]]
    first = doc["rows"][0]
    out = [f"agent loop: zero-latency model, echo_echo over stdio; median of {first['blocks']} blocks "
           f"(a run of {first['rounds']} rounds, a run of 1, {first['rounds']} direct calls)",
           table(["route", "downstream tools", "offered", "direct ms/call", "agent ms/round", "overhead ms/round",
                  "round/call ratio", "fixed ms/run", "target", "result"], rows)]
    m = doc["machine"]
    out.append(f"({m['cpus']} CPUs, load average {m['loadavg_before'][0]:.2f} before / "
               f"{m['loadavg_after'][0]:.2f} after; python {m['python']})")
    return "\n".join(out)


async def run(quick: bool = False, out: TextIO = sys.stdout, profile_runs: int = 0,
              sizes: Sequence[int] | None = None) -> dict[str, Any]:
    started, load_before = time.perf_counter(), os.getloadavg()
    print(f"agent benchmark ({'quick' if quick else 'full'}) ...", file=out, flush=True)
    quiet = logging.getLogger("hermes_hub")
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # a log line per run is the loop's, but printing it here is noise
    try:
        rows = [row for n in (sizes or ((100,) if quick else (100, 1000)))
                for row in await measure(n, 10 if quick else 20, 5 if quick else 30, out,
                                         profile_runs if n == (sizes or (100,))[0] else 0)]
    finally:
        quiet.setLevel(level)
    doc = {
        "benchmark": "agent", "quick": quick, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "loadavg_before": list(load_before), "loadavg_after": list(os.getloadavg())},
        "rows": rows, "targets": {"overhead_ms_per_round_max": TARGET_OVERHEAD_MS},
    }
    print(render(doc), file=out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "agent.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path} ({doc['seconds']} s)", file=out)
    return doc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.agent", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks and rounds, 100 tools only")
    parser.add_argument("--profile", type=int, nargs="?", const=20, default=0, metavar="RUNS",
                        help="then profile RUNS more runs at 100 tools (default 20) and print where the time goes")
    parser.add_argument("--tools", type=int, nargs="+", metavar="N", help="downstream tool counts (default 100 1000)")
    args = parser.parse_args(argv)
    anyio.run(run, args.quick, sys.stdout, args.profile, args.tools)


if __name__ == "__main__":
    main()
