"""hermes-hub benchmarks. ``python -m bench`` (or ``make bench``) runs them all; see bench/README.md."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

import anyio


def run_alone(name: str, run: Callable[[bool], Awaitable[object]], doc: str) -> None:
    """``python -m bench.NAME [--quick]``: one benchmark on its own (``python -m bench`` runs them all)."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{name}", description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run (smoke test)")
    anyio.run(run, parser.parse_args().quick)
