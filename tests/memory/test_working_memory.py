"""Working memory through a served hub: a constraint said early is honoured twenty messages later with a
window of 8, without a long-term memory; the person sees and edits it; it goes with its session and
never crosses users. The model is a local fake of OpenAI's API that answers right only when the
constraint is somewhere in what it was sent."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import InvalidInput, NotFound
from hermes_hub.services.memory.working import WorkingMemory
from tests.agent.vendors import openai_text, serve_app
from tests.postgres import new_database
from tests.support import as_user, serve_process

pytestmark = pytest.mark.anyio
ANA, BOB = "ana-static-token-0123456789", "bob-static-token-0123456789"
CONSTRAINT = "The user does not drink coffee"


class Model:
    """OpenAI's Chat Completions wire format; answers by what the request holds."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []  # the agent's requests

    async def endpoint(self, request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        last = body["messages"][-1]["content"]
        if "You keep the working memory" in system:
            new = last.split("NEW messages:", 1)[1]
            current = last.split("CURRENT working memory:\n", 1)[1].split("\n\nNEW messages:", 1)[0]
            kept = "" if current == "(empty)" else current
            text = f"- {CONSTRAINT}" if "don't drink coffee" in new else kept
            return JSONResponse(openai_text(json.dumps({"working": text})))
        if "long-term memory" in system:
            return JSONResponse(openai_text(json.dumps({"decisions": []})))  # the judge keeps nothing long-term
        if "running summary" in system:
            return JSONResponse(openai_text("Small talk about the weather."))
        self.asked.append(body)
        if "drink" in last:
            knows = "does not drink coffee" in json.dumps(body)
            return JSONResponse(openai_text("Green tea, since you skip coffee." if knows else "A double espresso!"))
        return JSONResponse(openai_text("Noted."))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.endpoint, methods=["POST"])])


def config(url: str, tmp_path: Any, working_judge: bool = True) -> dict[str, Any]:
    return {"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "auth": {"tokens": [{"token": ANA, "user": "ana"}, {"token": BOB, "user": "bob"}]},
            "memory": {"embedder": "none", "working_judge": working_judge},
            "agent": {"provider": "openai", "model": "gpt-4o-mini", "base_url": url, "api_key": "sk-test-0000",
                      "max_retries": 0, "window": 8}}


async def ok(host: Client, tool: str, args: dict[str, Any]) -> Any:
    r = await host.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content


async def refused(host: Client, tool: str, args: dict[str, Any]) -> str:
    r = await host.call_tool(tool, args)
    assert r.is_error
    return r.content[0].text


@pytest.mark.slow
async def test_a_constraint_said_early_is_honoured_twenty_messages_later_and_not_remembered_long_term(tmp_path):
    model = Model()
    async with serve_app(model.app()) as url, serve_process(config(url, tmp_path), tmp_path) as hub, \
            as_user(hub.url, ANA) as ana, as_user(hub.url, BOB) as bob:
        with anyio.fail_after(120):
            sid = (await ok(ana, "hermes_session_create", {"title": "morning"}))["session_id"]
            await ok(ana, "hermes_agent_run", {"task": "Plan my morning. I don't drink coffee.", "session_id": sid})
            for n in range(10):  # twenty messages: the constraint leaves the window of 8
                await ok(ana, "hermes_agent_run", {"task": f"Anything new on the weather? ({n})", "session_id": sid})
            out = await ok(ana, "hermes_agent_run", {"task": "What should I drink now?", "session_id": sid})
            shown = json.loads((await ana.read_resource(f"hub://hermes/sessions/{sid}/working")).contents[0].text)
            memories = await ok(ana, "hermes_memory_list", {})
            theirs = await refused(bob, "hermes_session_working", {"session_id": sid})
            with pytest.raises(Exception, match="not found"):
                await bob.read_resource(f"hub://hermes/sessions/{sid}/working")
            kept = await ok(ana, "hermes_session_working", {"session_id": sid})
    sent = model.asked[-1]
    said = [m["content"] for m in sent["messages"] if m["role"] in ("user", "assistant")]
    assert out["answer"] == "Green tea, since you skip coffee."
    assert len(said) <= 9 and not any("don't drink coffee" in s for s in said)  # out of the window
    assert "Working memory of this session" in sent["messages"][0]["content"]
    assert shown["text"] == f"- {CONSTRAINT}" and kept["text"] == shown["text"]
    assert memories["memories"] == []  # nothing was written to long-term memory
    assert "not found" in theirs


@pytest.mark.slow
async def test_notes_are_shown_to_later_runs_edited_by_the_person_and_gone_with_the_session(tmp_path):
    model = Model()
    async with serve_app(model.app()) as url, serve_process(config(url, tmp_path, working_judge=False),
                                                             tmp_path) as hub, as_user(hub.url, ANA) as ana:
        with anyio.fail_after(90):
            sid = (await ok(ana, "hermes_session_create", {"title": "drinks"}))["session_id"]
            noted = await ok(ana, "hermes_session_note", {"session_id": sid, "note": CONSTRAINT})
            again = await ok(ana, "hermes_session_note", {"session_id": sid, "note": CONSTRAINT})
            knows = await ok(ana, "hermes_agent_run", {"task": "What should I drink?", "session_id": sid})
            cleared = await ok(ana, "hermes_session_working", {"session_id": sid, "text": ""})
            forgot = await ok(ana, "hermes_agent_run", {"task": "What should I drink?", "session_id": sid})
            too_long = await refused(ana, "hermes_session_note", {"session_id": sid, "note": "x" * 301})
            await ok(ana, "hermes_session_note", {"session_id": sid, "note": "meet Wang, not Li"})
            await ok(ana, "hermes_session_delete", {"session_id": sid})
            gone = await refused(ana, "hermes_session_working", {"session_id": sid})
            rows = await ok(ana, "hermes_session_list", {})
    assert noted["text"] == again["text"] == f"- {CONSTRAINT}"  # a note already there is not added twice
    assert knows["answer"] == "Green tea, since you skip coffee."
    assert cleared["text"] == "" and forgot["answer"] == "A double espresso!"
    assert "too long" in too_long
    assert "not found" in gone and rows["sessions"] == []


@pytest.fixture(params=["sqlite", "postgres"])
async def url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/hub.db"
    return await new_database(request.getfixturevalue("pg_server"))


async def test_the_working_memory_is_the_callers_own_and_goes_with_every_session_on_both_stores(url):
    hub_config = parse_config({"mcpServers": {}, "storage": {"url": url}, "memory": {"embedder": "none"}})
    async with Hub(hub_config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            sid = (await ok(host, "hermes_session_create", {"title": "a"}))["session_id"]
            other = (await ok(host, "hermes_session_create", {"title": "b"}))["session_id"]
            await ok(host, "hermes_session_note", {"session_id": sid, "note": "meet Wang, not Li"})
            edited = await ok(host, "hermes_session_working", {"session_id": sid, "text": "- meet Wang at 3"})
            await ok(host, "hermes_session_note", {"session_id": other, "note": "no coffee"})
            working = WorkingMemory(hub.store)
            uid = (await hub.store.raw("SELECT user_id FROM sessions WHERE id = $1" if url.startswith("postgres")
                                       else "SELECT user_id FROM sessions WHERE id = ?", (sid,)))[0][0]
            with pytest.raises(NotFound):  # another user's session reads as one that does not exist
                await working.get("bob", sid)
            with pytest.raises(NotFound):
                await working.set("bob", sid, "- hijacked")
            with pytest.raises(InvalidInput, match="at most 2,000"):
                await working.set(uid, sid, "x" * 2001)
            await ok(host, "hermes_session_delete", {"all": True})
            left = await hub.store.raw("SELECT count(*) FROM working_memory")
    assert edited["text"] == "- meet Wang at 3"
    assert left == [(0,)]
