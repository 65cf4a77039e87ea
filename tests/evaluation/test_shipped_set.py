"""`hermes-hub eval` on the shipped scenario set, run as users run it (a subprocess): every case passes with
the scripted model that makes known mistakes, and the same cases fail, naming why, on a profile without the
router's and the confirmation's guards; so the checks are exercised both ways."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from hermes_hub.app.cli import main
from tests.support import PROJECT

pytestmark = pytest.mark.slow

SET = PROJECT / "evals" / "scenarios.json"
HUB = PROJECT / "evals" / "hub.json"


def evaluate(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_DEMO_DATA": str(tmp_path / "demo")}  # the demo servers' data and the hub's store
    return subprocess.run([sys.executable, "-m", "hermes_hub", "eval", str(SET), "--config", str(HUB), *args],
                          capture_output=True, text=True, env=env, timeout=110, cwd=tmp_path)


def test_the_shipped_set_has_at_least_30_cases_in_english_and_chinese_and_every_one_passes(tmp_path):
    proc = evaluate(tmp_path, "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["total"] >= 30 and report["passed"] == report["total"] and report["pass_rate"] == 1.0
    tags = [set(c["tags"]) for c in report["cases"]]
    assert sum("en" in t for t in tags) >= 10 and sum("zh" in t for t in tags) >= 10
    by_id = {c["id"]: c for c in report["cases"]}
    assert by_id["remind-and-calendar-en"]["intents"] == ["remind", "schedule"]
    assert by_id["confirm-declined-en"]["stop_reason"] == "declined"
    assert by_id["vague-needs-input-zh"]["stop_reason"] == "needs_input"
    assert by_id["repeated-results-stop-en"]["stop_reason"] == "repeated_results"


def test_without_the_routers_and_confirmations_guards_the_same_cases_fail_and_say_why(tmp_path):
    done = CliRunner(env={"HERMES_DEMO_DATA": str(tmp_path / "demo")}).invoke(  # in this process, to stay quick
        main, ["eval", str(SET), "--config", str(HUB), "--profile", "plain"])
    assert done.exit_code == 1
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("passed ") and not lines[-1].startswith("passed 34/34")
    text = done.stdout
    # the destructive call ran without the person's yes: the case that expected the question fails
    assert "FAIL  confirm-accepted-zh" in text and "the person was asked 0 questions, expected 1" in text
    # a tool outside the routed intent was not refused
    assert "FAIL  outside-intent-tool-refused-en" in text
    assert "expected a call calendar_create_event() failing" in text
    assert "routed to None, expected ['remind']" in text
    assert "PASS  repeated-results-stop-en" in text  # the loop's own guard holds on any profile
