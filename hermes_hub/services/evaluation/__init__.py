"""Evaluation (issue 21): sets of cases run against the hub's configuration through an MCP host, each
checked for what must hold; the runs a person rates down become cases of their own set.

    cases = load_cases(Path("evals/scenarios.json"))          # cases.py
    report = await Evaluator().run(host, cases)               # runner.py; host: a connected MCP Client
    report.passed, report.total, [o.failures for o in report.outcomes]
"""

from hermes_hub.services.evaluation.cases import Case, CaseSet, Expect, load_cases
from hermes_hub.services.evaluation.checks import check
from hermes_hub.services.evaluation.runner import Evaluator, Outcome, Report

__all__ = ["Case", "CaseSet", "Evaluator", "Expect", "Outcome", "Report", "check", "load_cases"]
