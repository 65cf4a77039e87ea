"""The agent's recall floor (``agent.recall_min_score``) measured on the LoCoMo dev conversations.

    python -m bench.recall_floor [--data DIR]        (also part of python -m bench memory)

Each conversation's observation facts become one user's memories (event time = the session's date),
through ``Memories.remember`` on a real SQLite file with the configured embedder, indexed before
measuring. A run is given at most 5 memories (``agent/background.py``), so for every floor:

* recall kept: recall@5 of the LoCoMo questions (a fact counts for the evidence turns it points at)
  with the floor, divided by recall@5 without it: how much of what helps still reaches the model;
* noise removed: of the memories recall returns for tasks that have nothing to do with the
  conversations ("quantum chromodynamics lecture schedule", 量子色动力学课程表...), the share the floor
  drops: what no longer distracts the model.

The data files are read in place, never copied.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

import anyio

from bench.memory import DATA, evidence, sessions

FLOORS = (0.0, 0.3, 0.4, 0.45, 0.5, 0.52, 0.55, 0.58, 0.6, 0.7, 0.8)
_DIA = re.compile(r"D\d+:\d+")
UNRELATED = (
    "quantum chromodynamics lecture schedule", "convert 250 grams of flour to cups",
    "what is the capital of Mongolia", "explain TCP slow start and congestion windows",
    "list the prime numbers below 50", "fix the failing CI build on the main branch",
    "fill in the quarterly VAT return form", "translate 'good morning' into Finnish",
    "the exchange rate from yen to euro today", "how many bytes are in a kibibyte",
    "compile the kernel module with debug symbols", "what is the boiling point of ethanol",
    "schedule the database migration for the billing service", "derivative of x squared times sine x",
    "rotate the TLS certificates on the load balancer", "who won the 1954 football world cup",
    "量子色动力学课程表", "把这段 Python 代码改成异步的", "今天人民币兑美元的汇率", "明天上午十点提醒我交电费",
)


async def measure(data: Path) -> dict[float, tuple[float, float]] | None:
    """floor -> (recall kept, noise removed), over every file in ``data``."""
    from hermes_hub.core.agent.background import LIMIT, relevance
    from hermes_hub.services.memory import Memories, RecallQuery
    from hermes_hub.infra.storage import open_store

    files = sorted(data.glob("*.json"))
    if not files:
        print(f"no LoCoMo files in {data}; pass --data DIR")
        return None
    relevant: list[tuple[set[str], list[tuple[float, list[str]]]]] = []  # (evidence, [(relevance, dia ids)])
    unrelated: list[float] = []
    embedder = "no embedder"
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            conv = json.loads(f.read_text())
            async with open_store(f"sqlite:///{tmp}/{f.stem}.db") as store:
                memories = Memories(store)
                vectors = memories.embedder is not None
                embedder = memories.embedder.name if vectors else "no embedder"
                if vectors and memories.embedder.dims:
                    await store.ensure_vector_table("memories", memories.embedder.name, memories.embedder.dims)
                by_memory: dict[str, list[str]] = {}
                known: set[str] = set()
                for n, when, turns in sessions(conv):
                    known.update(t["dia_id"] for t in turns)
                    for facts in (conv.get(f"session_{n}_observation") or {}).values():
                        for fact, source in facts:
                            rec = await memories.remember("u", fact, kind="fact", event_time=when.isoformat())
                            by_memory.setdefault(rec["memory_id"], []).extend(_DIA.findall(json.dumps(source)))
                while await memories.indexer.step():
                    pass
                for qa in conv["qa"]:
                    wanted = evidence(qa, known)
                    if wanted:
                        items = await memories.recall("u", RecallQuery(qa["question"], limit=LIMIT,
                                                                        sources=("memories",)), touch=False)
                        relevant.append((wanted, [(relevance(i, vectors), by_memory.get(i.memory_id or "", []))
                                                  for i in items]))
                for task in UNRELATED:
                    items = await memories.recall("u", RecallQuery(task, limit=LIMIT, sources=("memories",)),
                                                  touch=False)
                    unrelated += [relevance(i, vectors) for i in items]
    out: dict[float, tuple[float, float]] = {}
    base = _recall(relevant, 0.0)
    for floor in FLOORS:
        kept = _recall(relevant, floor) / base if base else 0.0
        removed = sum(1 for r in unrelated if round(r, 2) < floor) / len(unrelated) if unrelated else 0.0
        out[floor] = (kept, removed)
    print(f"recall floor on LoCoMo dev ({', '.join(f.name for f in files)}; {len(relevant)} questions, "
          f"{len(UNRELATED)} unrelated tasks x {len(files)} users; {embedder}; recall@{LIMIT} without a floor "
          f"{base:.3f}; unrelated tasks got {len(unrelated)} memories)")
    print(f"{'floor':>6}{'recall kept':>13}{'noise removed':>15}")
    for floor, (kept, removed) in out.items():
        print(f"{floor:>6.2f}{kept:>13.3f}{removed:>15.3f}")
    return out


def _recall(relevant: list[tuple[set[str], list[tuple[float, list[str]]]]], floor: float) -> float:
    scores = []
    for wanted, items in relevant:
        found = {d for r, dias in items if round(r, 2) >= floor for d in dias}
        scores.append(len(found & wanted) / len(wanted))
    return statistics.mean(scores) if scores else 0.0


async def run(quick: bool = False) -> None:
    print("== agent: the recall floor (agent.recall_min_score) on LoCoMo dev")
    await measure(DATA)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.recall_floor", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="folder of LoCoMo conversation files")
    anyio.run(measure, p.parse_args(argv).data)


if __name__ == "__main__":
    sys.exit(main())
