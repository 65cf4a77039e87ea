"""The shipped scenario set (issue 21) on each profile, and on a real model when one is given: pass rate and
seconds per case, against the scripted model on the ``office`` profile measured in the same run.

    python -m bench.evaluation                                    (also part of python -m bench)
    EVAL_MODEL=qwen2.5:7b EVAL_BASE_URL=http://localhost:11434/v1 python -m bench.evaluation

Each configuration runs the whole set through an MCP client against an in-process hub of
``evals/hub.json`` (demo servers on a fresh data folder). With ``EVAL_MODEL`` and ``EVAL_BASE_URL`` the
same cases also run on that OpenAI-compatible model, on both profiles: the comparison of models, prompts
and profiles that ``hermes-hub eval --model --base-url`` prints case by case.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

PROJECT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


async def one(profile: str, model: str | None, base_url: str | None) -> dict[str, Any]:

    from hermes_hub.app.cli.evaluate import overridden
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.evaluation import Evaluator, load_cases
    from hermes_hub.app.hub import Hub

    cases = load_cases(PROJECT / "evals" / "scenarios.json")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HERMES_DEMO_DATA"] = tmp
        cfg = overridden(load_config(PROJECT / "evals" / "hub.json"), model, base_url)
        started = time.perf_counter()
        async with Hub(cfg, config_path=PROJECT / "evals" / "hub.json") as hub:
            await hub.wait_settled(30)
            evaluator = Evaluator(profile)
            async with hub.client(mode="legacy", elicitation_callback=evaluator.elicitation) as host:
                report = await evaluator.run(host, cases)
        seconds = time.perf_counter() - started
    return {"profile": profile, "model": model or "scripted", "passed": report.passed, "total": report.total,
            "pass_rate": round(report.rate, 4), "seconds_per_case": round(seconds / report.total, 4),
            "failed": [o.case.id for o in report.outcomes if not o.passed]}


async def run(quick: bool = False, out: Any = sys.stdout) -> dict[str, Any]:
    print("== evaluation: the shipped scenario set per profile and model", file=out)
    model, base_url = os.environ.get("EVAL_MODEL"), os.environ.get("EVAL_BASE_URL")
    configs = [("office", None, None), ("plain", None, None)]
    if model and base_url:
        configs += [("office", model, base_url), ("plain", model, base_url)]
    rows = [await one(*c) for c in configs]
    base = rows[0]
    print(f"{'profile':<8}{'model':<24}{'passed':>10}{'rate':>8}{'s/case':>9}{'× baseline':>12}", file=out)
    for r in rows:
        ratio = r["seconds_per_case"] / base["seconds_per_case"] if base["seconds_per_case"] else 0
        print(f"{r['profile']:<8}{r['model']:<24}{r['passed']:>5}/{r['total']:<4}{r['pass_rate']:>8.1%}"
              f"{r['seconds_per_case']:>9.3f}{ratio:>11.2f}×", file=out)
    if not (model and base_url):
        print("(no EVAL_MODEL / EVAL_BASE_URL: the scripted model only)", file=out)
    doc = {"rows": rows, "baseline": "office profile, scripted model"}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "evaluation.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path}", file=out)
    return doc


if __name__ == "__main__":
    anyio.run(run)
