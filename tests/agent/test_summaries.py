"""Background session summaries: what slides out of a run's window is folded by the model into the
session's summary (from the durable queue in the store), and later runs read it."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from hermes_hub import Hub
from tests.support import toy

pytestmark = pytest.mark.anyio

RULES = [
    {"when": "^SUMMARY REQUEST", "text": "The user is planning a trip.\nKey facts:\n- flight LH 1234 on 2027-03-04"},
    {"when": "^turn", "text": "Noted."},
]


def write_hub(tmp_path, rules=RULES) -> str:
    (tmp_path / "model.json").write_text(json.dumps(rules))
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"toy": toy()},
        "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
        "agent": {"provider": "scripted", "script": "model.json", "window": 2},
    }))
    return str(cfg)


async def test_messages_past_the_window_are_folded_into_the_summary_that_the_next_run_reads(tmp_path):
    async with Hub.from_file(write_hub(tmp_path)) as hub, hub.client() as host:
        with anyio.fail_after(60):
            first = (await host.call_tool("hermes_agent_run", {"task": "turn 1"})).structured_content
            sid = first["session_id"]
            for n in (2, 3):
                await host.call_tool("hermes_agent_run", {"task": f"turn {n}", "session_id": sid})
            await hub.summaries.wait_idle()  # the hub's worker folds in the background
            session = await _session(host, sid)
            last = (await host.call_tool("hermes_agent_run", {"task": "turn 4", "session_id": sid})).structured_content
            trace = (await host.call_tool("hermes_trace_get", {"run_id": last["run_id"]})).structured_content
    assert "flight LH 1234 on 2027-03-04" in session["summary"]
    budget = next(e for e in trace["events"] if e["kind"] == "budget")
    assert budget["tokens"]["summary"] > 0 and budget["tokens"]["history"]["messages"] == 2
    rows = await _rows(tmp_path, "SELECT state, upto_seq FROM summary_jobs")
    assert rows == [("done", 4)]  # six messages, a window of two: the first four are in the summary


async def test_a_fold_the_model_cannot_write_stays_queued_and_the_session_is_untouched(tmp_path):
    rules = [{"when": "^turn", "text": "Noted."}]  # no rule answers a summary request: the model call fails
    async with Hub.from_file(write_hub(tmp_path, rules)) as hub, hub.client() as host:
        with anyio.fail_after(60):
            sid = (await host.call_tool("hermes_agent_run", {"task": "turn 1"})).structured_content["session_id"]
            for n in (2, 3):
                await host.call_tool("hermes_agent_run", {"task": f"turn {n}", "session_id": sid})
            await hub.summaries.wait_idle()  # the worker's attempt failed; the job waits for its retry
            report = await hub.report(hub.local)
            session = await _session(host, sid)
    assert session["summary"] == "" and session["message_count"] == 6
    assert report["summaries"]["queue"] == {"pending": 1}
    assert "no rule" in report["summaries"]["error"]


async def _session(host: Client, sid: str) -> dict:
    listed = (await host.call_tool("hermes_session_list", {})).structured_content["sessions"]
    return next(s for s in listed if s["session_id"] == sid)


async def _rows(tmp_path, sql: str) -> list[tuple]:
    from hermes_hub.infra.storage import open_store

    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
        return await store.raw(sql)
