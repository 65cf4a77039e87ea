"""hermes_agent_run through MCP clients with the scripted model: tool rounds through the catalog,
the guards (round limit, repeat breaker, confirmation, roles), errors, and the session it writes."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.call import CallContext, Identity
from tests.support import Progress, toy, until

pytestmark = pytest.mark.anyio

ECHO = {"name": "toy_echo", "arguments": {"text": "hello"}}
RULES = [
    {"when": "say hello through the tool", "tool_calls": [ECHO]},
    {"when": "^hello$", "text": "The tool said hello."},
    {"when": "loop forever", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "same"}}]},
    {"when": "^same$", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "same"}}]},
    {"when": "use the big tool", "tool_calls": [{"name": "toy_big", "arguments": {"size": 3}}]},
    {"when": "Unknown tool 'toy_big'", "text": "I may not use that tool."},
    {"when": "delete it", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "deleted"}}]},
    {"when": "^deleted$", "text": "Done: deleted."},
    {"when": "The person declined", "text": "OK, I left it alone."},
    {"when": "Refused: 'toy_echo' needs the person's confirmation", "text": "I could not ask you, so I did nothing."},
]


def write_hub(tmp_path, rules=RULES, **agent: Any) -> str:
    (tmp_path / "model.json").write_text(json.dumps(rules))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"toy": toy(tool_roles={"big": ["admin"]})},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
        "agent": {"provider": "scripted", "script": "model.json", **agent},
        "agents": {"careful": {"instructions": "Ask before acting.", "confirm": ["toy_echo"]}},
    }))
    return str(cfg)


async def run(host: Client, task: str, **args: Any) -> types.CallToolResult:
    with anyio.fail_after(60):
        return await host.call_tool("hermes_agent_run", {"task": task, **args})


async def test_a_run_calls_a_tool_through_the_catalog_and_answers_and_the_session_keeps_every_message(tmp_path):
    progress = Progress()

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            with anyio.fail_after(60):
                result = await host.call_tool("hermes_agent_run", {"task": "please say hello through the tool"},
                                              progress_callback=progress)
            out = result.structured_content
            history = (await host.call_tool("hermes_session_history", {"session_id": out["session_id"]})
                       ).structured_content["messages"]
            audit = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})).structured_content
    assert not result.is_error and result.content[0].text == "The tool said hello."
    assert (out["stop_reason"], out["rounds"]) == ("answered", 2)
    assert [(c["name"], c["arguments"], c["is_error"]) for c in out["tool_calls"]] == [("toy_echo", {"text": "hello"},
                                                                                         False)]
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "please say hello through the tool"), ("assistant", ""), ("tool", "hello"),
        ("assistant", "The tool said hello.")]
    assert history[1]["tool_calls"][0]["name"] == "toy_echo"
    assert {m["metadata"]["run_id"] for m in history} == {out["run_id"]}
    assert progress[:3] == ["round 1/5: thinking", "round 1/5: calling toy_echo", "round 2/5: thinking"]
    assert len(audit["calls"]) == 1  # the agent's tool call is audited like a host's


@pytest.mark.slow
async def test_three_identical_results_stop_the_run_and_the_round_limit_stops_it_before(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        repeated = (await run(host, "loop forever")).structured_content
    (tmp_path / "two").mkdir()
    async with Hub.from_file(write_hub(tmp_path / "two", max_rounds=2)) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        limited = (await run(host, "loop forever")).structured_content
    assert (repeated["stop_reason"], repeated["rounds"], len(repeated["tool_calls"])) == ("repeated_results", 3, 3)
    assert repeated["answer"].startswith("I stopped: the last 3 tool calls returned the same result")
    assert (limited["stop_reason"], limited["rounds"]) == ("max_rounds", 2)
    assert limited["answer"] == "Not finished: I used all 2 rounds. Done so far: toy_echo, toy_echo."


async def test_a_tool_the_caller_may_not_use_is_never_offered_nor_called_for_them(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        as_user = await hub.catalog.call_tool("hermes_agent_run", {"task": "use the big tool"},
                                              CallContext(Identity("ana", "user")))
        as_admin = await hub.catalog.call_tool("hermes_agent_run", {"task": "use the big tool"},
                                               CallContext(Identity("root", "admin")))
    user, admin = as_user.structured_content, as_admin.structured_content
    assert user["answer"] == "I may not use that tool."
    assert user["tool_calls"] == [{"name": "toy_big", "arguments": {"size": 3}, "is_error": True,
                                   "seconds": user["tool_calls"][0]["seconds"]}]
    assert admin["tool_calls"][0]["is_error"] is False


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # pushed elicitation, or input-required rounds
@pytest.mark.parametrize("allow, answer, stop", [(True, "Done: deleted.", "answered"),
                                                  (False, "OK, I left it alone.", "declined")])
@pytest.mark.slow
async def test_a_tool_that_needs_confirmation_runs_only_after_the_person_says_yes(tmp_path, allow, answer, stop, mode):
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": allow})

    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode=mode, elicitation_callback=on_elicit) as host:
            out = (await run(host, "delete it", profile="careful")).structured_content
    assert (out["answer"], out["stop_reason"]) == (answer, stop)
    assert hub.agent_bridge._pending == {}  # nothing left parked
    assert asked == ['The assistant wants to call toy_echo with text: "deleted". Allow it?']


async def test_a_host_that_cannot_confirm_gets_the_call_refused_never_auto_confirmed(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client() as host:  # 2026-07-28: no push
        assert await hub.wait_settled(30)
        out = (await run(host, "delete it", profile="careful")).structured_content
        echoed = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})).structured_content
    assert out["answer"] == "I could not ask you, so I did nothing."
    assert out["tool_calls"][0]["is_error"] is True and echoed["calls"] == []


async def test_a_model_that_cannot_answer_ends_the_run_with_a_clear_error_and_the_task_is_kept(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client() as host:
        result = await run(host, "something no rule knows")
        out = result.structured_content
        history = (await host.call_tool("hermes_session_history", {"session_id": out["session_id"]})
                   ).structured_content["messages"]
    assert result.is_error and out["stop_reason"] == "model_error"
    assert "no rule matches 'something no rule knows'" in out["answer"]
    assert [m["role"] for m in history] == ["user", "assistant"]


async def test_unknown_profile_busy_session_and_missing_model_are_clear_errors(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client() as host:
        unknown = await run(host, "x", profile="nope")
        sid = (await host.call_tool("hermes_session_create", {})).structured_content["session_id"]
        async with hub.sessions.lock(hub.local.user_id, sid):
            busy = await run(host, "say hello through the tool", session_id=sid)
    (tmp_path / "plain").mkdir()
    plain = tmp_path / "plain" / "hub.json"
    plain.write_text(json.dumps({"mcpServers": {}}))
    async with Hub.from_file(plain) as hub, hub.client() as host:
        nomodel = await run(host, "x")
    assert unknown.is_error and unknown.content[0].text == (
        "unknown agent profile 'nope'; the profiles are: careful, default")
    assert busy.is_error and "busy" in busy.content[0].text
    assert nomodel.is_error and "no model is configured" in nomodel.content[0].text


async def test_a_cancelled_run_stops_its_tool_call_keeps_the_session_consistent_and_frees_it(tmp_path):
    rules = [{"when": "take your time", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 60}}]},
             {"when": "say hello through the tool", "tool_calls": [ECHO]},
             {"when": "^hello$", "text": "The tool said hello."}]
    async with Hub.from_file(write_hub(tmp_path, rules)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy") as host:
            sid = (await host.call_tool("hermes_session_create", {})).structured_content["session_id"]
            relay = hub.pool.connections["toy"].relay

            async def give_up_once_the_tool_runs(scope: anyio.CancelScope) -> None:
                await until(lambda: relay._in_flight, timeout=30, every=0.02)  # toy_sleep has reached the server
                scope.cancel()

            async with anyio.create_task_group() as tg:  # the host gives up: the SDK sends notifications/cancelled
                with anyio.CancelScope() as scope:
                    tg.start_soon(give_up_once_the_tool_runs, scope)
                    await host.call_tool("hermes_agent_run", {"task": "take your time", "session_id": sid})
            async def written() -> list | None:  # the run ends promptly, writes what it did and lets go of the session
                return (await host.call_tool("hermes_session_history", {"session_id": sid})
                        ).structured_content["messages"]

            async def not_busy() -> Any:  # the lock goes as soon as the cancelled run has written its last rows
                again = await run(host, "say hello through the tool", session_id=sid)
                return None if again.is_error and "busy" in again.content[0].text else again

            history = await until(written, timeout=30)
            again = await until(not_busy, timeout=30)
            after = again.structured_content
            audit = (await host.call_tool("hermes_audit_query", {"tool": "toy_sleep"})).structured_content
    assert [(m["role"], m["content"]) for m in history][-1] == (
        "assistant", "The run was cancelled before it finished.")
    assert history[0]["content"] == "take your time"
    assert after["stop_reason"] == "answered"
    assert audit["calls"][0]["outcome"] in ("error", "timeout")  # the tool call was cancelled too


async def test_each_run_leaves_a_trace_its_calls_audit_rows_name_it_and_only_its_user_sees_it(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client() as host:
            out = (await run(host, "please say hello through the tool")).structured_content
            listed = (await host.call_tool("hermes_trace_list", {})).structured_content
            trace = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
            rated = (await host.call_tool("hermes_feedback", {"run_id": out["run_id"], "rating": "up",
                                                              "comment": "quick"})).structured_content
            resource = json.loads((await host.read_resource(f"hub://hermes/traces/{out['run_id']}")).contents[0].text)
            audit = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})).structured_content
        eve = CallContext(Identity("eve"))
        theirs = await hub.catalog.call_tool("hermes_trace_get", {"run_id": out["run_id"]}, eve)
        ghost = await hub.catalog.call_tool("hermes_trace_get", {"run_id": "run_nothing"}, eve)
        eves = await hub.catalog.call_tool("hermes_trace_list", {}, eve)
    assert [r["run_id"] for r in listed["runs"]] == [out["run_id"]]
    assert [e["kind"] for e in trace["events"]] == ["budget", "request", "tool", "request"]
    tool = trace["events"][2]
    assert (tool["name"], tool["server"], tool["outcome"], tool["arguments"]) == ("toy_echo", "toy", "ok",
                                                                                  {"text": "hello"})
    assert trace["events"][1]["provider"] == "scripted:model.json" and trace["events"][3]["finish"] == "end"
    assert rated == {"run_id": out["run_id"], "rating": "up", "comment": "quick"}
    assert resource["rating"] == "up" and resource["answer"] == "The tool said hello."
    assert [(c["run_id"], c["session_id"]) for c in audit["calls"]] == [(out["run_id"], out["session_id"])]
    assert theirs.is_error and theirs.content[0].text == ghost.content[0].text.replace("run_nothing", out["run_id"])
    assert eves.structured_content == {"runs": []}


@pytest.mark.slow
async def test_hermes_hub_traces_lists_runs_and_shows_one_round_by_round(tmp_path):
    import subprocess
    import sys

    from tests.support import PROJECT

    cfg = write_hub(tmp_path)
    async with Hub.from_file(cfg) as hub:
        assert await hub.wait_settled(30)
        async with hub.client() as host:
            out = (await run(host, "please say hello through the tool")).structured_content

    def traces(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hermes_hub", "traces", *args, "--config", cfg], cwd=PROJECT,
                              capture_output=True, text=True, timeout=60)

    listed, shown, missing = traces(), traces(out["run_id"]), traces("run_nothing")
    assert listed.returncode == 0 and out["run_id"] in listed.stdout and "answered" in listed.stdout
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{out['run_id']} (default): answered after 2 rounds, " + lines[0].split("rounds, ")[1]
    assert [line.split()[1] for line in lines[1:-1]] == ["budget", "request", "tool", "request"]
    assert lines[-1] == "answer: The tool said hello."
    assert missing.returncode == 1 and "run 'run_nothing' not found" in missing.stderr


async def test_each_profile_is_a_prompt_that_hands_its_task_to_the_agent_and_follows_the_config(tmp_path):
    cfg = write_hub(tmp_path)
    async with Hub.from_file(cfg) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        listed = {p.name: p for p in (await host.list_prompts()).prompts}
        got = await host.get_prompt("hermes_agent_careful", {"task": "tidy my notes", "session_id": "ses_1"})
        with pytest.raises(Exception) as missing:
            await host.get_prompt("hermes_agent_careful", {})
        from hermes_hub.infra.config import load_config

        data = json.loads((tmp_path / "hub.json").read_text())
        data["agents"]["planner"] = {"instructions": "You plan my week.\nDone when every day has a plan."}
        (tmp_path / "hub.json").write_text(json.dumps(data))
        await hub.reload(load_config(cfg))
        after = {p.name: p for p in (await host.list_prompts(cache_mode="refresh")).prompts}  # past the ttl cache
    assert {"hermes_agent_default", "hermes_agent_careful"} <= set(listed)
    assert [a.name for a in listed["hermes_agent_careful"].arguments] == ["task", "session_id"]
    assert listed["hermes_agent_careful"].description.endswith("(careful profile): Ask before acting.")
    text = got.messages[0].content.text
    assert "hermes_agent_run" in text
    assert json.loads(text[text.index("{"):]) == {"task": "tidy my notes", "profile": "careful", "session_id": "ses_1"}
    assert "needs the argument(s) task" in str(missing.value)
    assert after["hermes_agent_planner"].description.endswith("(planner profile): You plan my week.")


async def test_without_a_model_no_profile_prompts_are_offered(tmp_path):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}}))
    async with Hub.from_file(cfg) as hub, hub.client() as host:
        names = [p.name for p in (await host.list_prompts()).prompts]
    assert not [n for n in names if n.startswith("hermes_agent_")]


BAD_ARGUMENTS = [
    {"when": "echo badly", "tool_calls": [{"name": "toy_echo", "arguments": {}}]},
    {"when": "Invalid arguments for tool 'toy_echo'", "tool_calls": [{"name": "toy_echo", "arguments": {"txt": "x"}}]},
    {"when": "^from the person$", "text": "Echoed what you gave."},
]


async def test_invalid_arguments_go_back_to_the_model_naming_the_field_and_a_fix_runs_the_tool(tmp_path):
    rules = [{"when": "echo badly", "tool_calls": [{"name": "toy_echo", "arguments": {"txt": "x"}}]},
             {"when": "Invalid arguments for tool 'toy_echo'", "tool_calls": [ECHO]},
             {"when": "^hello$", "text": "Fixed it."}]
    async with Hub.from_file(write_hub(tmp_path, rules)) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        out = (await run(host, "echo badly")).structured_content
        history = (await host.call_tool("hermes_session_history", {"session_id": out["session_id"]})
                   ).structured_content["messages"]
    assert (out["answer"], out["stop_reason"]) == ("Fixed it.", "answered")
    feedback = history[2]["content"]
    assert feedback.startswith("Invalid arguments for tool 'toy_echo':") and "text" in feedback
    assert feedback.endswith("(correction 1 of 2).")


async def test_after_two_failed_corrections_the_person_is_asked_for_the_arguments(tmp_path):
    asked: list[dict] = []

    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append({"message": params.message, "schema": params.requested_schema})
        return types.ElicitResult(action="accept", content={"text": "from the person"})

    async with Hub.from_file(write_hub(tmp_path, BAD_ARGUMENTS)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode="legacy", elicitation_callback=on_elicit) as host:
            out = (await run(host, "echo badly")).structured_content
    assert (out["answer"], out["stop_reason"], out["rounds"]) == ("Echoed what you gave.", "answered", 4)
    assert [c["is_error"] for c in out["tool_calls"]] == [True, True, False]
    assert len(asked) == 1 and asked[0]["message"].startswith("The assistant could not get the arguments of toy_echo")
    assert asked[0]["schema"]["required"] == ["text"] and asked[0]["schema"]["properties"]["text"]["type"] == "string"


@pytest.mark.parametrize("mode, answer", [("2026-07-28", None), ("legacy", "decline")])
async def test_arguments_nobody_can_fix_stop_the_run_with_needs_input(tmp_path, mode, answer):
    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=answer)

    async with Hub.from_file(write_hub(tmp_path, BAD_ARGUMENTS)) as hub:
        assert await hub.wait_settled(30)
        async with hub.client(mode=mode, elicitation_callback=on_elicit if answer else None) as host:
            out = (await run(host, "echo badly")).structured_content
            audit = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})).structured_content
    assert (out["stop_reason"], out["rounds"]) == ("needs_input", 3)
    assert out["answer"].startswith("I need your help: after 2 corrections I still could not call toy_echo")
    assert audit["calls"] == []  # an invalid call never reaches the server


async def test_a_profile_with_its_own_model_runs_on_it_and_the_others_on_the_hubs(tmp_path):
    (tmp_path / "terse.json").write_text(json.dumps([{"text": "Terse model here."}]))
    cfg = write_hub(tmp_path)
    data = json.loads((tmp_path / "hub.json").read_text())
    data["agents"]["terse"] = {"script": "terse.json"}
    (tmp_path / "hub.json").write_text(json.dumps(data))
    async with Hub.from_file(cfg) as hub, hub.client() as host:
        assert await hub.wait_settled(30)
        terse = (await run(host, "say hello through the tool", profile="terse")).structured_content
        plain = (await run(host, "say hello through the tool")).structured_content
        traces = {r["profile"]: r["run_id"] for r in
                  (await host.call_tool("hermes_trace_list", {})).structured_content["runs"]}
        trace = (await host.call_tool("hermes_trace_get", {"run_id": traces["terse"]})).structured_content
    assert (terse["answer"], terse["rounds"]) == ("Terse model here.", 1)
    assert plain["answer"] == "The tool said hello."
    assert trace["events"][1]["provider"] == "scripted:terse.json"
