"""Secrets handed to the hub are masked in what it keeps (audit rows, session history, agent traces) and
reach the tool unchanged: the patterns on their own, then a served hub called over HTTP (issue 16, item 8)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from hermes_hub import Hub

from hermes_hub.services import audit
from hermes_hub.infra.config import parse_config
from hermes_hub.services.identity import new_token
from hermes_hub.infra.masking import MASKER, Masker
from tests.support import PROJECT, as_user, serve_process, toy

TOKEN = "masking-user-token-0123456789"
OPENAI = "sk-proj-Q1w2E3r4T5y6U7i8O9p0-aSdFgHjKl_ZxCvBnM1234"
ANTHROPIC = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-cBa_9876543210"
# issue 30 item 10: the hub's own OAuth tokens (authorization/grants.py), a JWT, Stripe and Google keys
HHA = "hha_" + "Qw3rTy8uIo0pAsDfGhJkLzXcVbNm1234567890-_Qwe"
HHR = "hhr_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-cBa_987654"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImFkbWluIjp0cnVlfQ.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"
STRIPE, STRIPE_RK = "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "rk_test_51H8xYzAbCdEfGhIjKlMnOpQr"
GOOGLE = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
TOKENS30 = (HHA, HHR, JWT, STRIPE, STRIPE_RK, GOOGLE)


@pytest.mark.parametrize("secret", [
    OPENAI, ANTHROPIC, "sk-svcacct-AbCdEfGhIjKlMnOpQrStUvWx0123", "sk-T3BlbkFJabcdefghij0123456789klmnopqrstuvwxyzAB",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "ghu_16C7e42F292c6912E7710c838347Ae178B4a", "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
    "ghr_16C7e42F292c6912E7710c838347Ae178B4a", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "xoxp-123456789012-abcdef", "xapp-1-A0123456789-1234567890-abcdef", pytest.param(new_token(), id="hub-token"),
    *TOKENS30, "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\n/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "-----END RSA PRIVATE KEY-----",
])
def test_well_known_key_formats_are_masked_wherever_they_sit_in_free_text(secret):
    assert MASKER.text(f"use {secret} for it") == "use *** for it"
    assert MASKER.text(f"({secret})") == "(***)"


@pytest.mark.parametrize(("said", "kept"), [
    ("my password is hunter2", "my password is ***"),
    ("My Password Is: hunter2, thanks", "My Password Is: *** thanks"),
    ("password: hunter2", "password: ***"),
    ("api key = abc123", "api key = ***"),
    ("API_KEY=abc123 next", "API_KEY=*** next"),
    ("DB_PASSWORD=s3cr3t", "DB_PASSWORD=***"),
    ('{"password": "correct horse battery staple", "user": "ann"}', '{"password": ***, "user": "ann"}'),
    ("my passphrase is 'correct horse battery staple' ok", "my passphrase is *** ok"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = ***"),
    ("the client secret: 8f0c1d", "the client secret: ***"),
    ("my token is abc.def", "my token is ***"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.Zm9v", "Authorization: Bearer ***"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic ***"),
    ("Authorization: Token 9944b09199c62bcf9418ad846dd0e4bb", "Authorization: Token ***"),
    ("curl -H 'Authorization: opaque-credential' https://api", "curl -H 'Authorization: ***' https://api"),
    ("sent with bearer 0123456789abcdef", "sent with bearer ***"),
    ("postgresql://app:pa55w0rd@db.internal:5432/main", "postgresql://app:***@db.internal:5432/main"),
    ("https://bob:p@ss@example.com/path", "https://bob:***@example.com/path"),
])
def test_phrases_and_headers_that_hand_over_a_secret_keep_their_words_and_lose_the_secret(said, kept):
    assert MASKER.text(said) == kept


@pytest.mark.parametrize("text", [
    "Plan the task-management rollout; risk-free, whisk-based, and sk-learn is fine.",
    "askew skills, desk-lamp, Task-Force-Alpha-Bravo-Charlie-Delta",
    "see https://github.com/org/repo/commit/3f2a9c1e5b7d9f0a1c3e5b7d9f0a1c3e5b7d9f0a",
    "https://example.com/files/9b74c9897bac770ffc029102a200c5de#section-2",
    "request 123e4567-e89b-12d3-a456-426614174000 finished",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the password field is required; forgot your password? click reset",
    "max_tokens 100, keyword tokens, monkey business",
    "basic knowledge of bearer bonds", "ssh://git@github.com/org/repo.git", "mailto:ann@example.com",
    "https://example.com/search?q=a@b&page=2", "http://localhost:8080/path@v2",
    "AKIA is a prefix; AKIASHORT is not a key", "ghp_short", "我们明天去北京开会, 密码学 is a topic",
    "the hh_ prefix, hha_short, sk_live_ alone, AIza is a prefix, eyJ and eyJhbGciOiJIUzI1NiJ9 alone",
])
def test_ordinary_text_ids_and_hashes_are_kept_as_written(text):
    assert MASKER.text(text) == text


def test_secret_named_keys_and_free_text_are_masked_at_any_depth_and_other_values_are_kept():
    args = {"query": "weather in Oslo", "api_key": "x", "Password": 1234, "token": None, "max_tokens": 100,
            "nested": [{"note": f"key {OPENAI}"}, {"headers": {"X-Api-Key": "k", "Accept": "text/plain"}}],
            "count": 3, "ok": True}
    assert MASKER(args) == {"query": "weather in Oslo", "api_key": "***", "Password": "***", "token": None,
                            "max_tokens": 100, "nested": [{"note": "key ***"},
                                                          {"headers": {"X-Api-Key": "***", "Accept": "text/plain"}}],
                            "count": 3, "ok": True}


def test_configured_patterns_apply_after_the_built_in_ones():
    masker = Masker(("email", r"ACME-\d+"))
    assert masker.text(f"mail ann@example.com re ACME-42 with {OPENAI}") == "mail *** re *** with ***"


def test_a_secret_across_the_audits_cut_is_masked_whole_not_kept_in_part():
    text = "x " * (audit.MAX_STRING // 2 - 5) + OPENAI + " and more"
    got = MASKER.text(text, limit=audit.MAX_STRING)
    assert OPENAI[:12] not in got and "sk-" not in got and got.endswith(f"…({len(text):,} chars)")


@pytest.mark.parametrize("hostile", [
    "a" * 1_000_000, "sk-" * 333_334, "sk-proj-" * 125_000, "password: " * 100_000, "password" + " " * 1_000_000,
    "Bearer " * 142_858, "bearer " + "a" * 1_000_000, "http://a:" * 111_112, "a://" + "b:" * 500_000,
    "-----BEGIN PRIVATE KEY-----" * 37_038, '"password": "' * 71_429, "xoxb-" * 200_000, "hh_" * 333_334,
    "the quick brown fox jumps over the lazy dog " * 22_728, "eyJ" * 333_334, "eyJab-" * 166_667,
    "eyJabcde." * 111_112, "eyJabcde.ab" * 90_910, "sk_live_" * 125_000, "AIza" * 250_000, "hha_" * 250_000,
])
def test_masking_a_megabyte_of_hostile_text_finishes_in_well_under_two_seconds(hostile):
    started = time.perf_counter()
    MASKER({"text": hostile})
    assert time.perf_counter() - started < 2.0


def config(tmp_path: Path, rules: list[dict] | None = None) -> dict:
    cfg = {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
           "auth": {"tokens": [{"token": TOKEN, "user": "ana", "role": "user"}]}}
    if rules is not None:
        (tmp_path / "model.json").write_text(json.dumps(rules))
        cfg["agent"] = {"provider": "scripted", "script": "model.json"}
    return cfg


@pytest.mark.slow
async def test_a_served_hub_audits_secrets_in_free_text_masked_and_the_tool_gets_them_as_written(tmp_path):
    text = f"key {OPENAI}"
    async with serve_process(config(tmp_path), tmp_path) as served:
        with anyio.fail_after(60):
            async with as_user(served.url, TOKEN) as host:
                result = await host.call_tool("toy_echo", {"text": text, "note": "my password is hunter2"})
                calls = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})
                         ).structured_content["calls"]
    assert not result.is_error and result.content[0].text == text  # the tool got the real value
    assert [c["arguments"] for c in calls] == [{"text": "key ***", "note": "my password is ***"}]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("hub.db*"))  # the database file and its WAL
    assert b"hunter2" not in stored and OPENAI.encode() not in stored


@pytest.mark.slow
async def test_the_agents_tool_calls_are_kept_masked_in_session_history_trace_and_result(tmp_path):
    arguments = {"text": "my password is swordfish", "api_key": ANTHROPIC, "password": "swordfish"}
    rules = [{"when": "store the deploy key", "tool_calls": [{"name": "toy_echo", "arguments": arguments}]},
             {"when": "^my password is swordfish$", "text": "Stored."}]
    masked = {"text": "my password is ***", "api_key": "***", "password": "***"}
    async with serve_process(config(tmp_path, rules), tmp_path) as served:
        with anyio.fail_after(90):
            async with as_user(served.url, TOKEN) as host:
                run = await host.call_tool("hermes_agent_run", {"task": "please store the deploy key"})
                out = run.structured_content
                history = (await host.call_tool("hermes_session_history", {"session_id": out["session_id"]})
                           ).structured_content["messages"]
                trace = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
                calls = (await host.call_tool("hermes_audit_query", {"tool": "toy_echo"})
                         ).structured_content["calls"]
    assert (run.content[0].text, out["stop_reason"]) == ("Stored.", "answered")
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[1]["tool_calls"][0]["arguments"] == masked
    assert history[2]["content"] == "my password is swordfish"  # the tool was called with the real arguments
    assert [c["arguments"] for c in out["tool_calls"]] == [masked]
    assert [e["arguments"] for e in trace["events"] if e["kind"] == "tool"] == [masked]
    assert [(c["arguments"], c["run_id"]) for c in calls] == [(masked, out["run_id"])]
    assert ANTHROPIC not in json.dumps([history, out, trace, calls])


async def test_a_hosts_own_tool_calls_appended_to_a_session_are_kept_masked(tmp_path):
    hub_config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}})
    async with Hub(hub_config) as hub, hub.client() as host:
        with anyio.fail_after(30):
            sid = (await host.call_tool("hermes_session_create", {"title": "deploy"})).structured_content["session_id"]
            await host.call_tool("hermes_session_append", {
                "session_id": sid, "role": "assistant", "content": "",
                "tool_calls": [{"id": "c1", "name": "deploy", "arguments": {"token": "t-1", "note": f"use {OPENAI}"}}]})
            history = (await host.call_tool("hermes_session_history", {"session_id": sid})
                       ).structured_content["messages"]
    assert history[0]["tool_calls"][0]["arguments"] == {"token": "***", "note": "use ***"}


@pytest.mark.slow
async def test_the_hubs_oauth_tokens_jwts_stripe_and_google_keys_are_masked_in_audit_traces_and_events(tmp_path):
    said = " ".join(TOKENS30)
    rules = [{"when": "relay the keys", "tool_calls": [{"name": "toy_echo", "arguments": {"text": f"keys {said}"}}]},
             {"when": "^keys ", "text": "Relayed."}]
    async with serve_process(config(tmp_path, rules), tmp_path) as served:
        with anyio.fail_after(120):
            async with as_user(served.url, TOKEN) as host:
                direct = await host.call_tool("toy_echo", {"text": said, "note": f"refresh with {HHR}"})
                out = (await host.call_tool("hermes_agent_run", {"task": f"please relay the keys {said}"})
                       ).structured_content
                trace = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
            async with httpx2.AsyncClient(timeout=30) as http:
                events = await http.get(served.url.removesuffix("/mcp") + "/events", params={"run": out["run_id"]},
                                        headers={"Authorization": f"Bearer {TOKEN}"})
            done = await anyio.run_process([sys.executable, "-m", "hermes_hub", "audit", "--json", "--config",
                                            str(served.config)], cwd=PROJECT, check=False)
    audit_rows = json.loads(done.stdout)
    assert direct.content[0].text == said  # the tool got them as written
    assert events.status_code == 200 and "UserMessageReceived" in events.text
    for seen in (events.text, json.dumps(trace), json.dumps(audit_rows), json.dumps(out)):
        assert [t for t in TOKENS30 if t in seen] == [], seen[:2000]
    echoed = next(r for r in audit_rows if r["tool"] == "toy_echo" and r["run_id"] is None)
    assert echoed["arguments"] == {"text": " ".join(["***"] * len(TOKENS30)), "note": "refresh with ***"}
    told = next(json.loads(line) for line in events.text.splitlines() if "UserMessageReceived" in line)
    assert told["text"] == "please relay the keys " + " ".join(["***"] * len(TOKENS30))


def test_the_event_bus_masks_an_events_free_text_whoever_publishes_it():
    from hermes_hub.infra.events import Bus, UserMessageReceived

    bus = Bus()
    with bus.subscribe("test") as events:
        bus.publish(UserMessageReceived(run_id="r1", user_id="ana", text=f"use {HHA} or {JWT}"))
        assert events._receive.receive_nowait().to_dict()["text"] == "use *** or ***"
    assert bus.stream("r1")[0].text == "use *** or ***"
