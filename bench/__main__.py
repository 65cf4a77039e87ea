"""Run every benchmark: ``python -m bench [--quick]``. Results go to bench/results/*.json.

Benchmarks report against their targets but never fail the process for a miss; only a crash
(a process that would not start, a wait that timed out) exits non-zero.
"""

from __future__ import annotations

import argparse

import anyio

from bench import (agent, cache, chaos, documents, evaluation, fuzz, hints, masking, memory, oauth, oauth_tokens, proxy,
                   recall_floor, schedules, sessions, startup, storage, storage_pg, supervision, tools)

BENCHMARKS = {"proxy": proxy.run, "storage": storage.run, "storage_pg": storage_pg.run, "supervision": supervision.run,
              "chaos": chaos.run, "fuzz": fuzz.run, "memory": memory.run, "agent": agent.run, "tools": tools.run,
              "cache": cache.run, "oauth_tokens": oauth_tokens.run, "oauth": oauth.run, "recall_floor": recall_floor.run,
              "masking": masking.run, "evaluation": evaluation.run, "schedules": schedules.run, "documents": documents.run,
              "startup": startup.run, "hints": hints.run,
              "sessions": sessions.run}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run (smoke test)")
    parser.add_argument("only", nargs="*", metavar="NAME", help=f"run only these ({', '.join(BENCHMARKS)}); default all")
    args = parser.parse_args(argv)
    if unknown := [n for n in args.only if n not in BENCHMARKS]:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    for name in args.only or BENCHMARKS:
        anyio.run(BENCHMARKS[name], args.quick)


if __name__ == "__main__":
    main()
