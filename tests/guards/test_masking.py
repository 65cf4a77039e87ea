"""guards.mask through a served hub: every detector's values leave the hub as placeholders (results,
structured content, embedded resources, error text) and so are never in the audit, a session or a
trace; the original is opened only by ``hermes-hub audit --unmask CALL_ID`` and the status page's
unmask view (the call's own user or an admin), each unmask audited, never by an MCP tool."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import pytest

from tests.guards import records_server as records
from tests.support import PROJECT, as_user, serve_process, until_listed

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"
RULES = [
    {"when": "look up the customer", "tool_calls": [{"name": "records_customer", "arguments": {"customer_id": "c1"}}]},
    {"when": "Ann Lee", "text": "Ann Lee's record is in; her numbers are masked."},
]


def config(tmp_path) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    server = {"command": sys.executable, "args": ["-m", "tests.guards.records_server"], "cwd": str(PROJECT)}
    return {"mcpServers": {"records": server}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "auth": {"tokens": [{"token": ALICE, "user": "alice"}, {"token": BOB, "user": "bob"}],
                     "local_user": "operator"},
            "agent": {"provider": "scripted", "script": "model.json"},
            "memory": {"embedder": "none"},
            "guards": {"mask": {"servers": ["records"], "patterns": {"customer": "CUST-[0-9]{4,8}"}}}}


async def cli(config_path, *args: str) -> tuple[int, str, str]:
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(config_path)],
                                   cwd=PROJECT, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def leaks(value: Any) -> list[str]:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return [s for s in records.SECRETS if s in text or s.replace(" ", "") in text.replace(" ", "")]


async def test_every_detector_masks_results_audit_sessions_and_traces_and_only_the_audited_cli_unmasks(tmp_path):
    async with serve_process(config(tmp_path), tmp_path) as served:
        with anyio.fail_after(100):
            async with as_user(served.url, ALICE) as alice, as_user(served.url, BOB) as bob:
                await until_listed(alice, "records_customer", 40)
                got = await alice.call_tool("records_customer", {"customer_id": "c1"})
                doc = await alice.call_tool("records_document", {})
                failed = await alice.call_tool("records_fail", {})
                run = (await alice.call_tool("hermes_agent_run", {"task": "please look up the customer"}))
                run = run.structured_content
                history = (await alice.call_tool("hermes_session_history", {"session_id": run["session_id"]}))
                trace = await alice.call_tool("hermes_trace_get", {"run_id": run["run_id"]})
                audit = (await alice.call_tool("hermes_audit_query", {})).structured_content["calls"]
                tools = (await alice.list_tools()).tools
                bob_audit = (await bob.call_tool("hermes_audit_query", {})).structured_content["calls"]
            row = next(r for r in audit if r["tool"] == "records_customer")
            page = served.url.removesuffix("/mcp") + "/status/unmask"
            async with httpx2.AsyncClient(timeout=30) as http:
                def as_(token: str) -> dict[str, str]:
                    return {"Authorization": f"Bearer {token}"}
                own = await http.post(page, data={"call_id": row["call_id"]}, headers=as_(ALICE))
                other = await http.post(page, data={"call_id": row["call_id"]}, headers=as_(BOB))
                form = await http.get(page, headers=as_(BOB))
                anonymous = await http.post(page, data={"call_id": row["call_id"]})
            code, out, err = await cli(served.config, "audit", "--unmask", row["call_id"])
            code_j, out_j, _ = await cli(served.config, "audit", "--unmask", row["call_id"], "--json")
            code_x, out_x, err_x = await cli(served.config, "audit", "--unmask", "0123456789abcdef")
            _, listing, _ = await cli(served.config, "audit", "--json")
            _, table, _ = await cli(served.config, "audit", "--tool", "records_customer")

    structured, text = got.structured_content, got.content[0].text
    assert not got.is_error and leaks(structured) == [] and leaks(text) == []
    assert structured["phone"] == "[phone#1]" and "called from [phone#1] again" in structured["note"]  # stable
    assert structured["mobile"] == "[phone#1]"  # +86 138-1234-5678 is the same number
    assert structured["id_number"] == "[cn_id#1]" and structured["card"] == "[card#1]"
    assert structured["email"] == "[email#1]" and "[ip#1] and [ip#2]" in structured["note"]
    assert "key [api_key#1]" in structured["note"] and "office [phone#2]" in structured["note"]
    assert records.HARMLESS in structured["note"]  # dates, order numbers, versions and ISBNs stay
    assert json.loads(text) == structured  # the text block holds the same placeholders
    assert doc.content[0].resource.text == "Ann Lee, [email#1], card [card#1]"
    assert failed.is_error and "no customer answers at [phone#1]" in failed.content[0].text
    assert "file [customer#1]" in structured["note"]  # a custom pattern (RE2)
    assert leaks(run) == [] and leaks(history.structured_content) == [] and leaks(trace.structured_content) == []
    assert "[phone#1]" in json.dumps(history.structured_content)  # the session kept the masked result
    assert leaks(audit) == [] and leaks(bob_audit) == []
    assert next(r for r in audit if r["tool"] == "records_fail")["error"].endswith("[phone#1]")
    assert all(r["call_id"] for r in audit if r["tool"].startswith("records_"))
    assert not any("unmask" in (t.name + (t.description or "")).lower() for t in tools)  # no tool a model can call

    assert code == 0, err
    assert records.PHONE in out and records.CN_ID in out and records.CARD in out  # the original, for the operator
    assert "this unmask is in the audit as operator" in err
    assert code_j == 0 and json.loads(out_j)["result"]["structuredContent"]["email"] == records.EMAIL
    assert code_x == 1 and "masked call '0123456789abcdef' not found" in err_x and "keep_hours" in err_x
    assert own.status_code == 200 and own.json()["result"]["structuredContent"]["card"] == records.CARD
    assert records.PHONE in own.json()["text"] and own.json()["masked"]["phone"] == 2
    assert other.status_code == 404 and leaks(other.text) == []  # bob may not open alice's call, nor learn of it
    assert form.status_code == 200 and "Unmask" in form.text and anonymous.status_code == 401
    unmasks = [r for r in json.loads(listing) if r["tool"] == "hermes-hub audit --unmask"]
    assert [(r["user_id"], r["outcome"], r["call_id"], r["arguments"]["owner"]) for r in unmasks] == [
        ("operator", "refused", "0123456789abcdef", None), ("operator", "ok", row["call_id"], "alice"),
        ("operator", "ok", row["call_id"], "alice"), ("bob", "refused", row["call_id"], None),
        ("alice", "ok", row["call_id"], "alice")]
    assert row["call_id"] in table  # `hermes-hub audit` shows the id a person unmasks by
