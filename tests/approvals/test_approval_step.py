"""Issue 22 §3 through in-process hosts (the SDK's in-memory ``Client`` against a real hub with a real toy
server and a real SQLite store): elicitation and input-required rounds, a replay with other arguments,
expiry, the agent's own confirmation asked once, and which tools need a yes."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest

from hermes_hub import Hub
from hermes_hub.core.pipeline.approval import QUESTION_KEY, STATE_PREFIX, Rules
from tests.support import toy

pytestmark = pytest.mark.anyio

RULES = [
    {"when": "echo it", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "agent"}}]},
    {"when": "^agent$", "text": "Echoed."},
]


def write_hub(tmp_path: Path, **approve: Any) -> str:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"toy": toy(overrides={"add": {"annotations": {"destructiveHint": True}}})},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
        "guards": {"approve": {"tools": ["toy_echo"], "timeout": 30, **approve}},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {"careful": {"instructions": "Ask first.", "confirm": ["toy_echo"]}},
    }))
    return str(cfg)


def answering(allow: bool, asked: list[str]) -> Any:
    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": allow})
    return on_elicit


def text(result: types.CallToolResult) -> str:
    return result.content[0].text


async def audit_rows(hub: Hub, tool: str, about: str | None = None) -> list[Any]:
    """Audit rows of ``tool`` (about approval ``about``, if given), newest first."""
    rows = await (await hub.audited_store()).query_audit(tool=tool, limit=500)
    return [r for r in rows if about is None or (r.arguments or {}).get("approval") == about]


def approval_id(question: str) -> str:
    return re.search(r"\(approval (apr_[\w-]+);", question).group(1)


@pytest.fixture(scope="module")
async def hub(tmp_path_factory) -> AsyncIterator[Hub]:
    """One hub for the tests that only add calls of their own."""
    async with Hub.from_file(write_hub(tmp_path_factory.mktemp("step"))) as started:
        assert await started.wait_settled(30)
        yield started


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # pushed elicitation, or an input-required round
@pytest.mark.parametrize("allow", [True, False])
async def test_a_tool_in_guards_approve_runs_only_after_the_caller_says_yes(hub, mode, allow):
    asked: list[str] = []
    with anyio.fail_after(30):
        async with hub.client(mode=mode, elicitation_callback=answering(allow, asked)) as host:
            result = await host.call_tool("toy_echo", {"text": "hi"})
    rows = await audit_rows(hub, "approval_approved" if allow else "approval_denied", approval_id(asked[0]))
    assert len(asked) == 1 and asked[0].startswith(
        'Allow toy_echo with these arguments?\n  text: "hi"\nThe whole call: `hermes-hub approvals show apr_')
    if allow:
        assert (text(result), result.is_error) == ("hi", False)
    else:
        assert result.is_error and text(result).startswith("Not approved: the person declined the call to 'toy_echo'")
    via = "elicitation" if mode == "legacy" else "input_required"
    assert [(r.user_id, r.arguments["tool"], r.arguments["by"], r.arguments["via"]) for r in rows] == [
        (hub.local.user_id, "toy_echo", hub.local.user_id, via)]


async def test_an_answered_round_replayed_with_other_arguments_is_refused_and_nothing_runs(hub):
    with anyio.fail_after(30):
        # the host declares elicitation; the test drives the rounds by hand
        async with hub.client(mode="2026-07-28", elicitation_callback=answering(True, [])) as host:
            asked = await host.session.call_tool("toy_echo", {"text": "harmless"}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            assert asked.request_state.startswith(STATE_PREFIX)
            yes = {QUESTION_KEY: types.ElicitResult(action="accept", content={"allow": True})}
            replay = await host.session.call_tool("toy_echo", {"text": "rm -rf /"}, allow_input_required=True,
                                                  input_responses=yes, request_state=asked.request_state)
            other_tool = await host.session.call_tool("toy_add", {"a": 1, "b": 2}, allow_input_required=True,
                                                      input_responses=yes, request_state=asked.request_state)
            honest = await host.session.call_tool("toy_echo", {"text": "harmless"}, allow_input_required=True,
                                                  input_responses=yes, request_state=asked.request_state)
            again = await host.session.call_tool("toy_echo", {"text": "harmless"}, allow_input_required=True,
                                                 input_responses=yes, request_state=asked.request_state)
    echoed = [r for r in await audit_rows(hub, "toy_echo") if r.arguments["text"] in ("harmless", "rm -rf /")]
    assert replay.is_error and "was given for toy_echo with other arguments" in text(replay)
    assert other_tool.is_error and "was given for toy_echo with other arguments" in text(other_tool)
    assert (text(honest), honest.is_error) == ("harmless", False)
    assert again.is_error and "already answered or has expired" in text(again)  # a yes is spent once
    # newest first: the spent replay, the approved call, the refused replay, the round that asked
    assert [(r.arguments["text"], r.outcome) for r in echoed] == [
        ("harmless", "tool_error"), ("harmless", "ok"), ("rm -rf /", "tool_error"), ("harmless", "ok")]


@pytest.mark.slow
async def test_an_unanswered_approval_expires_with_a_result_that_tells_the_model_what_to_do(tmp_path):
    async with Hub.from_file(write_hub(tmp_path, timeout=1)) as hub:
        assert await hub.wait_settled(30)
        with anyio.fail_after(30):
            async with hub.client() as host:  # a 2026-07-28 host that answers no elicitation: out of band
                result = await host.call_tool("toy_echo", {"text": "hi"})
        rows = await audit_rows(hub, "approval_expired")
        pending = await hub.approvals.pending(hub.local)
    assert result.is_error
    assert text(result).startswith("Not approved: nobody answered within 1 s")
    assert "hermes-hub approve" in text(result)
    assert [(r.arguments["by"], r.arguments["via"]) for r in rows] == [("nobody", "timeout")]
    assert pending == [] and hub.approvals.parked == {}


async def test_the_agents_own_confirmation_is_the_gateways_approval_so_the_person_is_asked_once(hub):
    asked: list[str] = []
    with anyio.fail_after(60):
        async with hub.client(mode="legacy", elicitation_callback=answering(True, asked)) as host:
            out = (await host.call_tool("hermes_agent_run", {"task": "echo it", "profile": "careful"}))
    rows = await audit_rows(hub, "approval_approved")
    assert out.structured_content["answer"] == "Echoed."
    assert asked == ['The assistant wants to call toy_echo with text: "agent". Allow it?']
    assert "agent" in [r.arguments["via"] for r in rows]


async def test_the_agent_loop_is_held_by_the_gateway_too(hub):
    asked: list[str] = []
    with anyio.fail_after(60):
        async with hub.client(mode="legacy", elicitation_callback=answering(False, asked)) as host:
            out = (await host.call_tool("hermes_agent_run", {"task": "echo it"}))  # the default profile asks nothing
    assert len(asked) == 1 and asked[0].startswith('Allow toy_echo with these arguments?\n  text: "agent"\n')
    assert out.structured_content["tool_calls"][0]["is_error"] is True


async def test_a_tool_annotated_destructive_needs_a_yes(hub):
    asked: list[str] = []
    with anyio.fail_after(30):
        async with hub.client(mode="legacy", elicitation_callback=answering(True, asked)) as host:
            added = await host.call_tool("toy_add", {"a": 2, "b": 3})
            listed = await host.call_tool("toy_whoami", {})
    assert [m.split()[1] for m in asked] == ["toy_add"]  # whoami: neither destructive nor in guards.approve.tools
    assert not added.is_error and not listed.is_error


def test_which_tools_need_a_yes_globs_and_destructive_hints_unless_approve_destructive_is_false():
    wipe = types.Tool(name="x_wipe", input_schema={"type": "object"},
                      annotations=types.ToolAnnotations(destructive_hint=True))
    unhinted = types.Tool(name="x_read", input_schema={"type": "object"})
    assert Rules(("x_r*",)).needs("x_read", unhinted) and Rules().needs("x_wipe", wipe)
    assert not Rules(destructive=False).needs("x_wipe", wipe) and not Rules().needs("x_read", unhinted)


async def test_a_yes_is_bound_to_caller_tool_and_arguments_in_the_store(hub):
    from hermes_hub.infra.call import Identity
    from hermes_hub.infra.errors import NotFound
    from hermes_hub.core.pipeline.approvals import digest_of

    book, ana = hub.approvals, Identity("ana")
    record = await book.open(ana, "toy_echo", "toy", {"b": 1, "a": [1, 2]}, timeout=30)
    for stranger in (Identity("bob"), Identity("ana", "admin"), Identity("root", "admin")):
        with pytest.raises(NotFound):
            await book.decide(record.id, stranger, approve=True, via="cli")
    await book.decide(record.id, ana, approve=True, via="cli")
    with pytest.raises(NotFound):  # answered once
        await book.decide(record.id, ana, approve=False, via="cli")
    assert await book.use(Identity("bob"), "toy_echo", record.digest) is None
    assert await book.use(ana, "toy_add", record.digest) is None
    assert await book.use(ana, "toy_echo", await digest_of({"a": [1, 2], "b": 2})) is None
    assert await book.use(ana, "toy_echo", await digest_of({"a": [1, 2], "b": 1})) is not None  # key order: same
    assert await book.use(ana, "toy_echo", record.digest) is None  # spent


async def test_a_leaked_round_state_answers_another_caller_as_an_unknown_one_and_the_approval_waits_on(hub):
    from hermes_hub.infra.call import CallContext, HostChannel, Identity, InputRounds

    def ctx(user: str, rounds: InputRounds) -> CallContext:
        return CallContext(Identity(user), host=HostChannel(in_rounds=("elicitation",)), rounds=rounds)

    args = {"text": "alice's"}
    with anyio.fail_after(30):
        asked = await hub.catalog.call_tool("toy_echo", args, ctx("alice", InputRounds()))
        yes = {QUESTION_KEY: {"action": "accept", "content": {"allow": True}}}
        by_bob = await hub.catalog.call_tool("toy_echo", args, ctx("bob", InputRounds(yes, asked.request_state)))
        waiting = await hub.approvals.pending(Identity("alice"))
        by_alice = await hub.catalog.call_tool("toy_echo", args, ctx("alice", InputRounds(yes, asked.request_state)))
    assert by_bob.is_error and text(by_bob).startswith("Not approved: this approval is unknown")
    assert [w.preview for w in waiting] == ['{"text": "alice\'s"}']
    assert (text(by_alice), by_alice.is_error) == ("alice's", False)
