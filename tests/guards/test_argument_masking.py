"""Issue 30 item 10b against a served hub: the detectors of ``guards.mask`` mask the arguments a host or
the agent sends wherever the hub keeps them (the audit, the session history, the trace), one setting for
results and arguments, while the tool gets the real values; ``storage.audit_mask_patterns`` still
applies, and the originals are sealed, so ``hermes-hub audit --unmask CALL_ID`` is the admin's way back."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from tests.guards import records_server as records
from tests.support import PROJECT, as_user, serve_process, until_listed

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ALICE = "alice-token-0123456789"
SENT = {"phone": records.PHONE, "id_number": records.CN_ID, "email": records.EMAIL, "order": "ORDER-77"}
MASKED = {"phone": "[phone#1]", "id_number": "[cn_id#1]", "email": "[email#1]", "order": "***"}
RULES = [
    {"when": "contact Ann", "tool_calls": [{"name": "records_contact", "arguments": SENT}]},
    {"when": "^sent to", "text": "Ann was contacted."},
]
REAL = f"sent to {records.PHONE} / {records.CN_ID} / {records.EMAIL} / ORDER-77"


def config(tmp_path) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    server = {"command": sys.executable, "args": ["-m", "tests.guards.records_server"], "cwd": str(PROJECT)}
    return {"mcpServers": {"records": server},
            "storage": {"url": f"sqlite:///{tmp_path}/hub.db", "audit_mask_patterns": [r"ORDER-\d+"]},
            "auth": {"tokens": [{"token": ALICE, "user": "alice"}], "local_user": "operator"},
            "agent": {"provider": "scripted", "script": "model.json"}, "memory": {"embedder": "none"},
            # results of records_customer only: records_contact's echo reaches the host as the tool wrote it
            "guards": {"mask": {"servers": ["records"], "tools": ["records_customer"]}}}


async def cli(config_path, *args: str) -> tuple[int, str, str]:
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(config_path)],
                                   cwd=PROJECT, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def leaks(value: Any) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return [s for s in (*SENT.values(), records.PHONE.replace(" ", "")) if s in text]


async def test_arguments_are_kept_masked_by_the_detectors_the_tool_gets_them_and_audit_unmask_shows_them(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served:
        with anyio.fail_after(120):
            async with as_user(served.url, ALICE) as alice:
                await until_listed(alice, "records_contact", 40)
                direct = await alice.call_tool("records_contact", SENT)
                run = (await alice.call_tool("hermes_agent_run", {"task": "please contact Ann"})).structured_content
                history = (await alice.call_tool("hermes_session_history", {"session_id": run["session_id"]})
                           ).structured_content["messages"]
                trace = (await alice.call_tool("hermes_trace_get", {"run_id": run["run_id"]})).structured_content
                calls = (await alice.call_tool("hermes_audit_query", {"tool": "records_contact"})
                         ).structured_content["calls"]
            code, listing, err = await cli(served.config, "audit", "--json", "--tool", "records_contact")
            rows = json.loads(listing) if code == 0 else []
            opened = [await cli(served.config, "audit", "--unmask", r["call_id"], "--json") for r in rows]
            code_t, shown, err_t = await cli(served.config, "audit", "--unmask", rows[-1]["call_id"] if rows else "0")

    assert (direct.is_error, direct.content[0].text) == (False, REAL)  # the tool got the real values
    assert run["stop_reason"] == "answered" and history[2]["content"] == REAL  # in the agent's run too
    assert code == 0, err
    assert [r["arguments"] for r in rows] == [MASKED, MASKED] and leaks(rows) == []  # `hermes-hub audit`
    assert [c["arguments"] for c in calls] == [MASKED, MASKED] and leaks(calls) == []  # the audit tool
    assert history[1]["tool_calls"][0]["arguments"] == MASKED  # the session history
    assert [e["arguments"] for e in trace["events"] if e["kind"] == "tool"] == [MASKED]  # the trace
    assert leaks(trace) == [] and leaks(run["tool_calls"]) == []
    assert [json.loads(out)["arguments"] for _, out, _ in opened] == [SENT, SENT]  # the admin's way back
    assert all(c == 0 for c, _, _ in opened)
    assert code_t == 0, err_t
    assert records.PHONE in shown and records.CN_ID in shown and records.EMAIL in shown
    assert "this unmask is in the audit as operator" in err_t
