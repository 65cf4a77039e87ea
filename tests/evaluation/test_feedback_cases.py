"""A run rated down with hermes_feedback (or `hermes-hub eval add RUN_ID`) becomes a case of the person's
evaluation set, from its task, the conversation before it and the comment; `hermes-hub eval --set mine`
reruns them: the same answer fails the case until a change fixes it. (The commands run in this process
through click; the shipped set's test runs `hermes-hub eval` as a subprocess.)"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import anyio
from click.testing import CliRunner

from hermes_hub import Hub
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.app.cli import main

RULES = [{"when": "what is two plus two", "text": "Five."}, {"when": "say hi", "text": "Hi."}]


def write_hub(tmp_path, rules=RULES) -> str:
    (tmp_path / "model.json").write_text(json.dumps(rules))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                               "auth": {"local_user": "ana"}, "memory": {"embedder": "none"},
                               "agent": {"provider": "scripted", "script": "model.json"}}))
    return str(cfg)


def hermes(config: str, *args: str) -> SimpleNamespace:
    done = CliRunner().invoke(main, [*args, "--config", config])
    return SimpleNamespace(returncode=done.exit_code, stdout=done.stdout, stderr=done.stderr)


async def rate_down(config: str) -> tuple[dict[str, Any], dict[str, Any], Any, dict[str, Any]]:
    async with Hub.from_file(config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            session = (await host.call_tool("hermes_session_create", {})).structured_content["session_id"]
            for role, content in (("user", "let's do some sums"), ("assistant", "Sure.")):
                await host.call_tool("hermes_session_append", {"session_id": session, "role": role, "content": content})
            run = (await host.call_tool("hermes_agent_run", {"task": "what is two plus two?", "session_id": session})
                   ).structured_content
            rated = (await host.call_tool("hermes_feedback", {"run_id": run["run_id"], "rating": "down",
                                                              "comment": "two plus two is four"})).structured_content
            other = await hub.catalog.call_tool("hermes_feedback", {"run_id": run["run_id"], "rating": "down"},
                                                CallContext(Identity("bob", "user")))
            [case] = [r.case for r in await hub.store.list_eval_cases("ana")]
    return run, rated, other, case


async def one_run(config: str, task: str) -> dict[str, Any]:
    async with Hub.from_file(config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            return (await host.call_tool("hermes_agent_run", {"task": task})).structured_content


def test_a_run_rated_down_becomes_a_case_that_fails_until_a_change_fixes_it(tmp_path):
    config = write_hub(tmp_path)
    run, rated, other, case = anyio.run(rate_down, config)
    assert rated["eval_case"] == f"mine-{run['run_id']}" and other.is_error  # bob cannot rate (or keep) ana's run
    assert case["task"] == "what is two plus two?" and case["note"] == "two plus two is four"
    assert case["history"] == [{"role": "user", "content": "let's do some sums"}, {"role": "assistant", "content": "Sure."}]
    assert case["expect"] == {"stop_reason": "answered", "differs_from": "Five."}

    failing = hermes(config, "eval", "--set", "mine")
    assert failing.returncode == 1, failing.stderr
    assert f"FAIL  mine-{run['run_id']}" in failing.stdout
    assert "note: two plus two is four" in failing.stdout
    assert "- the answer is the same as the one that was rated down" in failing.stdout

    write_hub(tmp_path, [{"when": "what is two plus two", "text": "Four."}, *RULES])  # the fix
    fixed = hermes(config, "eval", "--set", "mine", "--json")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    report = json.loads(fixed.stdout)
    assert (report["passed"], report["total"]) == (1, 1) and report["cases"][0]["answer"] == "Four."


def test_eval_add_keeps_any_of_your_runs_as_a_case_and_an_unknown_run_is_named(tmp_path):
    config = write_hub(tmp_path)
    run = anyio.run(one_run, config, "say hi")
    added = hermes(config, "eval", "add", run["run_id"])
    assert added.returncode == 0 and added.stdout.strip() == (
        f"added case mine-{run['run_id']} to your evaluation set; `hermes-hub eval --set mine` reruns it")
    missing = hermes(config, "eval", "add", "run_nope")
    assert missing.returncode == 1 and "run_nope" in missing.stderr
    (tmp_path / "empty").mkdir()
    nothing = hermes(write_hub(tmp_path / "empty"), "eval", "--set", "mine")
    assert nothing.returncode == 1 and "your evaluation set is empty: rate a run down with hermes_feedback" in nothing.stderr
