"""A tool result past max_tool_result_tokens is cut for the model and kept whole as the caller's artifact:
paged through hermes_artifact_read and hub://hermes/artifacts/{id}, named in the session, trace and audit,
counted in status, refused to other users, gone with its session and after artifacts.keep_days."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import anyio
import pytest

from hermes_hub.core.agent.artifacts import Artifacts
from hermes_hub.core.agent.results import CUT_KEY, cut
from hermes_hub.infra.config.sections import ArtifactsSection
from hermes_hub.infra.errors import NotFound
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import ArtifactRecord, utcnow
from tests.support import as_user, serve_process, toy

pytestmark = pytest.mark.anyio

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"
RULES = [
    {"when": "fetch the big text", "tool_calls": [{"name": "toy_big", "arguments": {"size": 50000}}]},
    {"when": "cut: the result had 50,000 characters", "text": "I read the first part; the rest is kept."},
]


def config(tmp_path) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    return {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "auth": {"tokens": [{"token": ALICE, "user": "alice"}, {"token": BOB, "user": "bob"}]},
            "agent": {"provider": "scripted", "script": "model.json", "max_tool_result_tokens": 500},
            "artifacts": {"keep_days": 7}}


async def call(host: Any, name: str, args: dict[str, Any]) -> Any:
    result = await host.call_tool(name, args)
    return result.structured_content if not result.is_error else result.content[0].text


@pytest.mark.slow
async def test_a_50000_character_result_is_kept_whole_for_its_user_and_goes_with_the_session(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served:
        with anyio.fail_after(90):
            async with as_user(served.url, ALICE) as alice, as_user(served.url, BOB) as bob:
                out = await call(alice, "hermes_agent_run", {"task": "please fetch the big text"})
                trace = await call(alice, "hermes_trace_get", {"run_id": out["run_id"]})
                tool = next(e for e in trace["events"] if e["kind"] == "tool")
                aid = tool["artifact_id"]
                history = (await call(alice, "hermes_session_history", {"session_id": out["session_id"]}))["messages"]
                audit = (await call(alice, "hermes_audit_query", {"tool": "agent.artifact"}))["calls"]
                pages, offset = [], 0
                while offset is not None:
                    page = await call(alice, "hermes_artifact_read", {"artifact_id": aid, "offset": offset,
                                                                      "limit": 20000})
                    pages.append(page["text"])
                    offset = page["next_offset"]
                whole = (await alice.read_resource(f"hub://hermes/artifacts/{aid}")).contents[0].text
                counted = (await call(alice, "hermes_hub_status", {}))["artifacts"]
                stranger = await call(bob, "hermes_artifact_read", {"artifact_id": aid})
                bob_counted = (await call(bob, "hermes_hub_status", {}))["artifacts"]
                await call(alice, "hermes_session_delete", {"session_id": out["session_id"]})
                after = await call(alice, "hermes_artifact_read", {"artifact_id": aid})
                after_counted = (await call(alice, "hermes_hub_status", {}))["artifacts"]
    assert out["answer"] == "I read the first part; the rest is kept."
    shown = next(m for m in history if m["role"] == "tool")
    assert shown["metadata"]["artifact_id"] == aid and aid in shown["content"]  # the session names it
    assert len(shown["content"]) <= 2000 and "hermes_artifact_read" in shown["content"]  # the model read a cut copy
    assert [(a["arguments"]["artifact_id"], a["arguments"]["chars"], a["run_id"]) for a in audit] == [
        (aid, 50000, out["run_id"])]
    assert [len(p) for p in pages] == [20000, 20000, 10000] and "".join(pages) == "x" * 50000
    assert whole == "x" * 50000
    assert counted == {"count": 1, "chars": 50000} and bob_counted == {"count": 0, "chars": 0}
    assert stranger.startswith(f"unknown artifact '{aid}'") or "not found" in stranger.lower()
    assert after == stranger and after_counted == {"count": 0, "chars": 0}  # forgotten with the session


def test_a_json_result_is_cut_to_valid_json_that_says_what_was_left_out_and_where_the_rest_is():
    rows = [{"id": i, "title": f"meeting {i}", "notes": "n" * 300} for i in range(200)]
    text = json.dumps({"events": rows, "total": 200})
    shown = cut(text, "application/json", 2000, artifact_id="art_abc", reader="hermes_artifact_read")
    value = json.loads(shown)
    assert len(shown) <= 2000
    assert value["total"] == 200 and isinstance(value["events"], list) and value["events"]
    assert value[CUT_KEY]["artifact_id"] == "art_abc" and value[CUT_KEY]["total_chars"] == len(text)
    assert any("characters from" in r or "array item" in r for r in value[CUT_KEY]["removed"])
    assert "hermes_artifact_read" in value[CUT_KEY]["read_all"]
    listed = json.loads(cut(json.dumps(rows), "application/json", 1500, artifact_id=None, reader=None))
    assert isinstance(listed["result"], list) and "not available" in listed[CUT_KEY]["read_all"]


async def test_an_artifact_past_keep_days_is_refused_at_once_and_the_sweep_deletes_it(tmp_path):
    settings = ArtifactsSection(keep_days=1, max_chars=1000)
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        from hermes_hub.services.sessions import Sessions

        sid = (await Sessions(store).create("alice", "t")).session_id
        artifacts = Artifacts(store, settings)
        fresh = await artifacts.keep("alice", sid, "run_1", "toy_big", "y" * 1500, "text/plain")
        await store.add_artifact(ArtifactRecord("art_old", "alice", sid, "run_0", "toy_big", "text/plain", "old", 3,
                                                utcnow() - timedelta(days=2)))
        page = await artifacts.page("alice", fresh.artifact_id, offset=900, limit=500)
        with pytest.raises(NotFound):
            await artifacts.page("alice", "art_old")
        pruned = await artifacts.prune()
        left = await store.artifact_counts("alice")
    assert fresh.truncated and fresh.chars == 1000  # past artifacts.max_chars: the first max_chars are kept
    assert (page["text"], page["next_offset"], page["total_chars"]) == ("y" * 100, None, 1000)
    assert pruned == 1 and left == {"count": 1, "chars": 1000}
