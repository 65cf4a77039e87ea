"""Issue 16, item 6: an MCP session, and a call parked for a host's answer, belong to whoever opened them.

Bob holds a real token of his own and alice's ``Mcp-Session-Id`` (the hub used to log it): he must
not end her session, read it, or answer the hub's own questions on it ("The assistant wants to call
... Allow it?"); each of his requests gets exactly the 404 of an unknown session. A 2026-07-28 host's
parked call resumes only for its own caller. And no session id reaches the hub's log.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client

from hermes_hub import Hub
from hermes_hub.infra.bridge import STATE_PREFIX, Bridge
from hermes_hub.infra.call import CallContext, HostChannel, Identity, InputRounds
from hermes_hub.infra.errors import DownstreamError
from hermes_hub.services.identity import create_token, new_token
from hermes_hub.infra.storage import open_store
from hermes_hub.protocol.upstream.ownership import HIDDEN
from tests.support import Served, demo, free_port, process, serve_process, wait_port

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
WIPE = {"name": "notes_create_note", "arguments": {"title": "evil wipe", "body": "everything is gone"}}
RULES = [
    {"when": "wipe the notes", "tool_calls": [WIPE]},
    {"when": "The person declined", "text": "OK, I left it alone."},
    {"when": "evil-wipe", "text": "Done: wiped."},
]


@dataclass(frozen=True)
class TwoUsers:
    served: Served
    alice: str
    bob: str
    alices_phone: str  # a second token of alice's
    notes: Path  # the notes server's data: a note titled "evil wipe" is the destructive call's trace

    def url(self, endpoint: str = "") -> str:
        return self.served.url + endpoint

    def wiped(self) -> bool:
        path = self.notes / "notes.json"
        return path.exists() and any(n["title"] == "evil wipe" for n in json.loads(path.read_text())["notes"])


def hub_config(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    return {
        "mcpServers": {"notes": demo("notes", tmp_path / "notes")},
        "auth": {"tokens": [{"token": "${HERMES_TOKEN_BOB}", "user": "bob"}]},
        "agent": {"provider": "scripted", "script": "model.json"},
        "agents": {"careful": {"instructions": "Ask before acting.", "confirm": ["notes_create_note"]}},
        "memory": {"embedder": "none"},
        "toolsets": {"work": {"servers": ["notes"]}},
    }


@pytest.fixture
async def two_users(tmp_path, monkeypatch) -> AsyncIterator[TwoUsers]:
    bob = new_token()
    monkeypatch.setenv("HERMES_TOKEN_BOB", bob)  # hub.json's ${HERMES_TOKEN_BOB}; the hub inherits it
    async with open_store() as store:
        alice, _ = await create_token(store, "alice", "user", "laptop")
        phone, _ = await create_token(store, "alice", "user", "phone")
    async with serve_process(hub_config(tmp_path), tmp_path) as served:
        yield TwoUsers(served, alice, bob, phone, tmp_path / "notes")


def headers(token: str, sid: str | None = None) -> dict[str, str]:
    session = {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": VERSION} if sid else {}
    return {**ACCEPT, "Authorization": f"Bearer {token}", **session}


def rpc(msg_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params else {})}


def answer(msg_id: Any, allow: bool) -> dict[str, Any]:
    """A host's reply to the hub's elicitation request ``msg_id``: the person's yes or no."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": {"action": "accept", "content": {"allow": allow}}}


def sse_messages(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]


async def open_session(http: httpx2.AsyncClient, url: str, token: str) -> str:
    """initialize + notifications/initialized as a host that can be asked (elicitation): the session id."""
    init = rpc(1, "initialize", {"protocolVersion": VERSION, "capabilities": {"elicitation": {"form": {}}},
                                 "clientInfo": {"name": "binding-test", "version": "1"}})
    opened = await http.post(url, json=init, headers=headers(token))
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    done = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                           headers=headers(token, sid))
    assert done.status_code == 202
    return sid


def seen(response: httpx2.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    """Everything a caller can tell from a response, but its date."""
    return response.status_code, sorted((k, v) for k, v in response.headers.items() if k != "date"), response.content


async def attempts(http: httpx2.AsyncClient, url: str, token: str, sid: str) -> list[tuple[Any, ...]]:
    """DELETE, POST and GET of session ``sid`` with ``token``, as a caller sees the answers."""
    h = headers(token, sid)
    return [seen(await http.delete(url, headers=h)),
            seen(await http.post(url, json=rpc(7, "tools/list"), headers=h)),
            seen(await http.get(url, headers={**h, "Accept": "text/event-stream"}))]


@pytest.mark.parametrize("endpoint", ["", "/work"])  # the whole catalog, and a toolset's endpoint
@pytest.mark.slow
async def test_another_users_delete_post_and_get_on_a_session_get_the_unknown_session_404_and_it_lives_on(
        two_users, endpoint):
    url = two_users.url(endpoint)
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=10) as http:
            sid = await open_session(http, url, two_users.alice)
            by_bob = await attempts(http, url, two_users.bob, sid)
            still = await http.post(url, json=rpc(2, "tools/list"), headers=headers(two_users.alice, sid))
            closed = await http.delete(url, headers=headers(two_users.alice, sid))
            unknown = await attempts(http, url, two_users.bob, sid)  # now no session has that id
            bobs_own = await open_session(http, url, two_users.bob)
            by_alice = await attempts(http, url, two_users.alice, bobs_own)
    assert [status for status, _, _ in by_bob] == [404, 404, 404]
    assert by_bob == unknown  # same status, headers and body as for an id nobody holds
    assert b"unknown session" in by_bob[0][2]
    assert still.status_code == 200 and "notes_create_note" in still.text  # bob's DELETE did not end it
    assert closed.status_code == 200
    assert [status for status, _, _ in by_alice] == [404, 404, 404]  # and the other way round


@pytest.mark.slow
async def test_a_session_answers_only_the_token_that_opened_it_not_even_another_token_of_the_same_user(two_users):
    url = two_users.url()
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=10) as http:
            sid = await open_session(http, url, two_users.alice)
            by_phone = await attempts(http, url, two_users.alices_phone, sid)
            still = await http.post(url, json=rpc(2, "tools/list"), headers=headers(two_users.alice, sid))
    assert [status for status, _, _ in by_phone] == [404, 404, 404]
    assert still.status_code == 200


@pytest.mark.slow
async def test_another_user_cannot_answer_a_confirmation_asked_on_a_users_session_and_hers_still_counts(two_users):
    url, alice, bob = two_users.url(), two_users.alice, two_users.bob
    outcomes: list[tuple[int, int, int, str]] = []  # bob's statuses (reusing her id, answering), hers, the answer

    async def run(http: httpx2.AsyncClient, sid: str, msg_id: int, bobs: bool, hers: bool) -> None:
        call = rpc(msg_id, "tools/call", {"name": "hermes_agent_run",
                                          "arguments": {"task": "wipe the notes", "profile": "careful"}})
        async with http.stream("POST", url, json=call, headers=headers(alice, sid)) as stream:
            lines = stream.aiter_lines()
            async for line in lines:
                question = next(iter(sse_messages(line)), None)
                if question and question.get("method") == "elicitation/create":
                    break
            assert "evil wipe" in question["params"]["message"] and "Allow it?" in question["params"]["message"]
            # Her call's id is in flight on her session: to bob that says nothing either.
            probe = await http.post(url, json=rpc(msg_id, "tools/list"), headers=headers(bob, sid))
            by_bob = await http.post(url, json=answer(question["id"], bobs), headers=headers(bob, sid))
            assert not two_users.wiped()
            by_alice = await http.post(url, json=answer(question["id"], hers), headers=headers(alice, sid))
            async for line in lines:
                done = next(iter(sse_messages(line)), None)
                if done and done.get("id") == msg_id:
                    break
        outcomes.append((probe.status_code, by_bob.status_code, by_alice.status_code,
                         done["result"]["content"][0]["text"]))

    with anyio.fail_after(90):
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(10, read=60)) as http:
            sid = await open_session(http, url, alice)
            await run(http, sid, 2, bobs=True, hers=False)  # bob says yes, she says no
            wiped_after_first = two_users.wiped()
            await run(http, sid, 3, bobs=False, hers=True)  # bob says no, she says yes
    assert outcomes[0] == (404, 404, 202, "OK, I left it alone.")  # bob's yes never reached the run
    assert not wiped_after_first
    assert outcomes[1] == (404, 404, 202, "Done: wiped.")  # her own yes does
    assert two_users.wiped()


@pytest.mark.slow
async def test_the_hubs_log_holds_no_session_id_after_sessions_were_opened_used_refused_and_closed(two_users):
    url = two_users.url()
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=10) as http:
            sid = await open_session(http, url, two_users.alice)
            listed = await http.post(url, json=rpc(2, "tools/list"), headers=headers(two_users.alice, sid))
            await attempts(http, url, two_users.bob, sid)  # refused: the SDK logs the id it refused
            await http.delete(url, headers=headers(two_users.alice, sid))
            await attempts(http, url, two_users.alice, sid)  # unknown by now: logged too
    log = two_users.served.log.read_text()
    assert listed.status_code == 200
    assert sid not in log and sid[:16] not in log
    assert HIDDEN in log  # the SDK did write about sessions: with the id hidden


@pytest.mark.slow
async def test_the_session_id_a_downstream_http_server_hands_the_hub_stays_out_of_the_hubs_log(tmp_path):
    port = free_port()
    server_log = tmp_path / "notes.log"
    argv = [sys.executable, "-m", "servers.notes", "--http", str(port)]
    with process(argv, server_log, env={"HERMES_DEMO_DATA": str(tmp_path / "notes")}) as notes:
        with anyio.fail_after(20):
            await wait_port(port, notes, server_log)
        remote = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy"}  # a session
        async with serve_process({"mcpServers": {"remote": remote}}, tmp_path) as served:
            with anyio.fail_after(30):
                async with Client(served.url) as host:
                    made = await host.call_tool("remote_create_note", {"title": "Over HTTP", "body": "once"})
    handed = re.findall(r"session ID: ([0-9a-f]{32})", server_log.read_text())  # the server's own log
    assert made.structured_content["id"] == "over-http"
    assert handed and not any(sid in served.log.read_text() for sid in handed)


# -- the bridge: a parked call resumes only for its own caller -----------------------------------------------

ALICE, BOB, ALICE_ADMIN = Identity("alice"), Identity("bob"), Identity("alice", "admin")
QUESTION = types.ElicitRequestFormParams(message="Allow it?", requested_schema={
    "type": "object", "properties": {"allow": {"type": "boolean"}}, "required": ["allow"]})


async def ask_then_report(ctx: CallContext) -> types.CallToolResult:
    assert ctx.host.elicit is not None
    said = await ctx.host.elicit(QUESTION)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{said.action} {said.content}")])


def retry(caller: Identity, state: str, key: str, allow: bool) -> CallContext:
    return CallContext(caller, rounds=InputRounds({key: types.ElicitResult(action="accept", content={"allow": allow})},
                                                  state))


async def test_a_parked_call_is_resumed_only_by_its_caller_and_anyone_else_is_told_as_for_an_unknown_round():
    refusals: list[str] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            bridge = Bridge("toy")
            bridge.attach(tg)
            parked = await bridge.call(CallContext(ALICE, rounds=InputRounds()), ask_then_report)
            assert isinstance(parked, types.InputRequiredResult)
            key, state = next(iter(parked.input_requests)), parked.request_state
            for caller, presented in ((BOB, state), (ALICE_ADMIN, state), (BOB, STATE_PREFIX + "no-such-round")):
                with pytest.raises(DownstreamError) as refused:
                    await bridge.call(retry(caller, presented, key, True), ask_then_report)
                refusals.append(str(refused.value))
            done = await bridge.call(retry(ALICE, state, key, False), ask_then_report)
            tg.cancel_scope.cancel()
    assert len(set(refusals)) == 1 and "expired or was already answered" in refusals[0]
    assert isinstance(done, types.CallToolResult) and done.content[0].text == "accept {'allow': False}"
    assert bridge._pending == {}


async def test_another_users_answer_to_a_2026_hosts_agent_run_confirmation_does_not_run_the_tool(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    config = hub_config(tmp_path)
    del config["auth"]
    (tmp_path / "hub.json").write_text(json.dumps(config))
    args = {"task": "wipe the notes", "profile": "careful"}
    modern_host = HostChannel(key="host", in_rounds=("elicitation",))  # how a 2026-07-28 host's call arrives
    async with Hub.from_file(str(tmp_path / "hub.json")) as hub:
        with anyio.fail_after(60):
            assert await hub.wait_settled(30)
            asked = await hub.catalog.call_tool("hermes_agent_run", args,
                                                CallContext(ALICE, host=modern_host, rounds=InputRounds()))
            assert isinstance(asked, types.InputRequiredResult)
            key, state = next(iter(asked.input_requests)), asked.request_state
            by_bob = await hub.catalog.call_tool("hermes_agent_run", args, retry(BOB, state, key, True))
            unknown = await hub.catalog.call_tool("hermes_agent_run", args,
                                                  retry(BOB, STATE_PREFIX + "no-such-round", key, True))
            hers = await hub.catalog.call_tool("hermes_agent_run", args, retry(ALICE, state, key, False))
    assert by_bob.is_error and by_bob.content == unknown.content
    assert hers.content[0].text == "OK, I left it alone."
    notes = tmp_path / "notes" / "notes.json"
    assert not notes.exists() or json.loads(notes.read_text())["notes"] == []
