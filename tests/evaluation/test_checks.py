"""What a case expects, checked against a run's result: matchers, order, and failures a person can act on;
and case files that cannot be read say where and why."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_hub.app.cli import main
from hermes_hub.services.evaluation import check, load_cases
from hermes_hub.services.evaluation.cases import CaseError, Expect

DONE = {"answer": "Reminder set for 10:00: call Li.", "stop_reason": "answered", "intents": ["remind", "schedule"],
        "asked": 0, "tool_calls": [
            {"name": "reminders_send_reminder", "arguments": {"content": "call Li", "time": "2026-12-02T10:00:00"},
             "is_error": True},
            {"name": "reminders_send_reminder", "arguments": {"content": "call Li", "time": "2026-12-02T10:00:00+08:00"},
             "is_error": False},
            {"name": "calendar_query", "arguments": {"start_date": "2026-12-02", "end_date": "2026-12-02"},
             "is_error": False}]}


def expect(**kw) -> Expect:
    return Expect.model_validate(kw)


def test_a_run_that_did_what_the_case_expects_passes_every_matcher():
    assert check(expect(
        tools=[{"name": "reminders_send_reminder", "is_error": True},
               {"name": "reminders_*", "arguments": {"time": {"$regex": r"\+08:00$"}, "content": {"$contains": "li"}}},
               {"name": "calendar_query", "arguments": {"start_date": "2026-12-02", "end_date": {"$any_of": ["2026-12-02"]},
                                                        "attendees": {"$present": False}}}],
        not_tools=["calendar_create_*"], contains=["CALL LI"], not_contains=["error"], stop_reason="answered",
        intents=["remind", "schedule"], asked=0, differs_from="Five."), DONE) == []


def test_each_unmet_expectation_is_one_failure_that_says_what_happened():
    failures = check(expect(
        tools=[{"name": "calendar_query"}, {"name": "reminders_send_reminder"}],  # in order: the reminder came first
        not_tools=["reminders_*"], contains=["Monday"], not_contains=["call li"], stop_reason="needs_input",
        intents=["schedule"], asked=1, differs_from="Reminder set for 10:00:  call Li."), DONE)
    assert failures[0].startswith("expected a call reminders_send_reminder(); the calls were: reminders_send_reminder(")
    assert failures[1:] == [
        "reminders_send_reminder was called, but no call may match 'reminders_*'",
        "the answer does not contain 'Monday'; it was: 'Reminder set for 10:00: call Li.'",
        "the answer contains 'call li', which it must not; it was: 'Reminder set for 10:00: call Li.'",
        "the run ended with 'answered', expected 'needs_input'",
        "routed to ['remind', 'schedule'], expected ['schedule']",
        "the person was asked 0 questions, expected 1",
        "the answer is the same as the one that was rated down"]


@pytest.mark.parametrize("content, problem", [
    ("[1, 2]", "cases.json: the file: Input should be a valid dictionary"),
    ('{"cases": [{"id": "a", "task": "x"}, {"id": "a", "task": "y"}]}', "case id 'a' is used twice"),
    ('{"cases": [{"id": "a", "task": "x", "expect": {"tool": []}}]}', "cases[0].expect.tool: unknown key"),
    ('{"cases": [{"id": "a", "task": "x", "expect": {"tools": [{"name": "t", "arguments": {"x": {"$rx": "1"}}}]}}]}',
     "argument 'x': a matcher is one of $regex, $contains, $present, $any_of"),
    ('{"cases": [{"id": "a b", "task": "x"}]}', "case id 'a b' must be 1-80 letters"),
    ('{"cases": [', "cases.json: not valid JSON at line 1, column 12"),
])
def test_a_case_file_that_cannot_be_read_names_the_file_the_case_and_the_problem(tmp_path, content, problem):
    path = tmp_path / "cases.json"
    path.write_text(content)
    with pytest.raises(CaseError) as e:
        load_cases(path)
    assert problem in str(e.value)


def test_the_eval_command_fails_on_a_bad_case_file_before_starting_a_hub_and_wants_a_file_or_a_set(tmp_path):
    (tmp_path / "cases.json").write_text(json.dumps({"cases": []}))
    runner = CliRunner()
    bad = runner.invoke(main, ["eval", str(tmp_path / "cases.json"), "--config", str(tmp_path / "none.json")])
    assert bad.exit_code == 1 and "cases: List should have at least 1 item" in bad.output
    neither = runner.invoke(main, ["eval"])
    assert neither.exit_code == 2 and "give a case FILE or --set mine (one of the two)" in neither.output
    add = runner.invoke(main, ["eval", "add"])
    assert add.exit_code == 2 and "give one run id: hermes-hub eval add RUN_ID" in add.output
