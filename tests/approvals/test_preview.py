"""Issue 30 item 5 against a served hub: the person approving a call sees every argument the yes covers
(the elicitation, the status page, `hermes-hub approvals`), each value shortened to enough to judge, the
whole call one step away (`hermes-hub approvals show ID`, `/status/approvals/ID`, for the caller or an
admin only), and a call that cannot be shown in full is refused without asking: the tool never runs."""

from __future__ import annotations

import html
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.approvals.test_served_approvals import ROLES, TOKENS, Hub, cli, pending
from tests.support import PROJECT, serve_process, until

pytestmark = pytest.mark.anyio
NOTE = "Tidy up the shared folder, keep only this year's invoices. " + "Padding to push the rest out. " * 40
TIDY = {"note": NOTE, "target": "/home/alice"}
CUT = f'note: "{NOTE[:200]}" … ({len(NOTE) - 200:,} more characters)'
RULES = [{"when": "tidy my home", "tool_calls": [{"name": "chores_tidy", "arguments": TIDY}]},
         {"when": "^tidied ", "text": "Tidied."}]


@pytest.fixture(scope="module")
async def hub(tmp_path_factory) -> AsyncIterator[Hub]:
    tmp = tmp_path_factory.mktemp("preview")
    db = f"sqlite:///{tmp / 'hub.db'}"
    (tmp / "model.json").write_text(json.dumps(RULES))
    chores = {"command": sys.executable, "args": ["-m", "tests.approvals.chores_server"], "cwd": str(PROJECT)}
    config = {
        "mcpServers": {"chores": chores},
        "storage": {"url": db},
        "auth": {"tokens": [{"token": t, "user": u, "role": ROLES[u]} for u, t in TOKENS.items()]},
        "guards": {"approve": {"tools": ["chores_tidy", "chores_file"], "timeout": 90}},
        "agent": {"provider": "scripted", "script": "model.json"}, "memory": {"embedder": "none"},
        "agents": {"careful": {"instructions": "Ask first.", "confirm": ["chores_tidy"]}},
    }
    async with serve_process(config, tmp) as served:
        yield Hub(served, db)


def host(hub: Hub, user: str, mode: str = "auto", asked: list[str] | None = None) -> Any:
    """An SDK host of ``user``'s; with ``asked`` it answers every elicitation yes and keeps its message."""
    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert asked is not None
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[user]}"}, timeout=httpx2.Timeout(30, read=120))
    extra = {} if asked is None else {"elicitation_callback": on_elicit}
    return http, Client(streamable_http_client(hub.served.url, http_client=http), mode=mode, **extra)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # pushed elicitation; an input-required round (2026-07-28)
@pytest.mark.slow
async def test_the_elicitation_shows_every_argument_the_yes_covers_and_where_to_read_the_whole_call(hub, mode):
    asked: list[str] = []
    with anyio.fail_after(60):
        http, client = host(hub, "alice", mode, asked)
        async with http, client:
            ran = await client.call_tool("chores_tidy", TIDY)
    done = f"tidied /home/alice ({len(NOTE)} characters of instructions)"
    assert (ran.is_error, ran.content[0].text) == (False, done)
    (question,) = asked
    assert question.startswith("Allow chores_tidy with these arguments?\n")
    assert f"\n  {CUT}\n" in question and '\n  target: "/home/alice"\n' in question
    assert "`hermes-hub approvals show apr_" in question and "/status/approvals/apr_" in question


async def test_the_agents_own_confirmation_shows_every_argument_and_is_the_one_question_asked(hub):
    asked: list[str] = []
    with anyio.fail_after(60):
        http, client = host(hub, "alice", "legacy", asked)
        async with http, client:
            out = (await client.call_tool("hermes_agent_run", {"task": "tidy my home", "profile": "careful"}))
    assert out.structured_content["answer"] == "Tidied."
    assert asked == [f'The assistant wants to call chores_tidy with {CUT}; target: "/home/alice". Allow it?']


@pytest.mark.slow
async def test_the_status_page_and_the_cli_show_every_argument_and_the_whole_call_to_its_caller_or_an_admin(hub):
    base = hub.served.url.removesuffix("/mcp")
    with anyio.fail_after(120):
        http, client = host(hub, "alice")  # a host that cannot be asked: the call waits out of band
        async with http, client, anyio.create_task_group() as tg:
            out: dict[str, Any] = {}

            async def call() -> None:
                out["result"] = await client.call_tool("chores_tidy", TIDY)

            tg.start_soon(call)
            (waiting,) = await until(lambda: pending(hub, "alice"), timeout=30)
            code, listed, err = await cli(hub, "approvals", "--token", TOKENS["alice"])
            assert code == 0, err
            code_j, listed_j, _ = await cli(hub, "approvals", "--token", TOKENS["alice"], "--json")
            code_s, shown, err_s = await cli(hub, "approvals", "show", waiting.id, "--token", TOKENS["alice"])
            code_b, _, err_b = await cli(hub, "approvals", "show", waiting.id, "--token", TOKENS["bob"])
            async with httpx2.AsyncClient(timeout=10) as web:
                def as_(user: str) -> dict[str, str]:
                    return {"Authorization": f"Bearer {TOKENS[user]}"}
                page = await web.get(f"{base}/status", headers=as_("alice"))
                own = await web.get(f"{base}/status/approvals/{waiting.id}", headers=as_("alice"))
                own_page = await web.get(f"{base}/status/approvals/{waiting.id}",
                                         headers={**as_("alice"), "accept": "text/html"})
                admin = await web.get(f"{base}/status/approvals/{waiting.id}", headers=as_("root"))
                stranger = await web.get(f"{base}/status/approvals/{waiting.id}", headers=as_("bob"))
                anonymous = await web.get(f"{base}/status/approvals/{waiting.id}")
            code_a, _, err_a = await cli(hub, "approve", waiting.id, "--token", TOKENS["alice"])
            assert code_a == 0, err_a
    assert (out["result"].is_error, out["result"].content[0].text.split(" (")[0]) == (False, "tidied /home/alice")
    assert f"    {CUT}\n" in listed and '    target: "/home/alice"\n' in listed  # `hermes-hub approvals`
    assert json.loads(listed_j)[0]["arguments"] == [CUT, 'target: "/home/alice"']
    assert code_s == 0 and json.loads(shown) == TIDY  # `approvals show`: the whole note
    assert code_b == 1 and f"approval '{waiting.id}' not found" in err_b and NOTE[:40] not in err_b
    text = html.unescape(page.text)  # the status page's list
    assert page.status_code == 200 and 'target: "/home/alice"' in text and CUT in text
    assert f'href="/status/approvals/{waiting.id}"' in page.text
    assert own.status_code == 200 and own.json()["arguments"] == TIDY and own.json()["user"] == "alice"
    assert own_page.status_code == 200 and NOTE.strip() in html.unescape(own_page.text)
    assert admin.status_code == 200 and admin.json()["arguments"] == TIDY
    assert stranger.status_code == 404 and NOTE[:40] not in stranger.text and "not found" in stranger.json()["error"]
    assert anonymous.status_code == 401


@pytest.mark.parametrize(("records", "why"), [
    ([{"n": i} for i in range(60)], "it holds more than 50 values"),
    ({"a": {"b": {"c": {"d": {"e": {"f": {"g": "deep"}}}}}}}, "is nested deeper than 6 levels"),
    ([{"k" * 300: 1}], "is longer than 200 characters"),
    ([f"{i:03d} " + "v" * 150 for i in range(45)], "the call's preview would run to"),
])
async def test_a_call_that_cannot_be_shown_in_full_is_refused_without_asking_and_never_runs(hub, records, why):
    asked: list[str] = []
    with anyio.fail_after(60):
        http, client = host(hub, "bob", "legacy", asked)
        async with http, client:
            before = await client.call_tool("chores_filed", {})
            refused = await client.call_tool("chores_file", {"records": records})
            ran = await client.call_tool("chores_filed", {})
            small = await client.call_tool("chores_file", {"records": [{"n": 1}]})  # what held still holds
            ran_after = await client.call_tool("chores_filed", {})
    text = refused.content[0].text
    assert refused.is_error and text.startswith("Not run: the call to 'chores_file' needs a person's approval, but ")
    assert why in text and "it cannot be shown to them in full, so it was not asked for and did not run" in text
    counts = [int(r.content[0].text) for r in (before, ran, ran_after)]
    assert counts[1] == counts[0] and counts[2] == counts[0] + 1  # the refused call never reached the tool
    assert len(asked) == 1 and "records[0].n: 1" in asked[0]  # only the showable call was asked for
    assert (small.is_error, small.content[0].text) == (False, "filed 1")
    assert await pending(hub, "bob") == []
