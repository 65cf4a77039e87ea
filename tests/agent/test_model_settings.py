"""Model settings and the output budget: temperature, top_p and max_tokens reach each vendor in its own
terms (asserted on what the vendor received), profiles override them, the request leaves the answer
``max_tokens`` of the model's window, and an answer cut by the length limit is continued once or said
to be cut (``stop_reason: "length"``)."""

from __future__ import annotations

import json

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from hermes_hub import Hub
from hermes_hub.core.agent.completion import CONTINUE
from hermes_hub.core.agent.profiles import resolve
from hermes_hub.app.cli import main
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from hermes_hub.infra.models import Message
from tests.agent.test_providers import ANTHROPIC, BOTH, KEY, OPENAI, Vendor, base_for, provider_for
from tests.agent.test_providers import OPENED
from tests.agent.vendors import FakeVendor, served
from tests.support import serve_process, toy

pytestmark = pytest.mark.anyio


def hub_config(v: Vendor, url: str, tmp_path, agents: dict | None = None, **agent) -> dict:
    return {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "agent": {"provider": v.provider, "model": v.model, "base_url": base_for(v, url), "api_key": KEY,
                      "max_retries": 0, **agent}, "agents": agents or {}}


def cut(v: Vendor, text: str) -> dict:
    """The vendor's answer stopped by its length limit."""
    body = v.text(text)
    if v is OPENAI:
        body["choices"][0]["finish_reason"] = "length"
    else:
        body["stop_reason"] = "max_tokens"
    return body


@BOTH
@pytest.mark.slow
async def test_runs_send_the_default_temperature_and_max_tokens_and_a_profile_overrides_them(v: Vendor, tmp_path):
    fake = FakeVendor(v.path)
    fake.answer(v.text("Done."), times=10)  # memory extraction asks the same vendor between the runs
    agents = {"precise": {"temperature": 0, "top_p": 0.9, "max_tokens": 512}}
    async with served(fake) as url, serve_process(hub_config(v, url, tmp_path, agents), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                first = (await host.call_tool("hermes_agent_run", {"task": "hello"})).structured_content
                second = (await host.call_tool("hermes_agent_run", {"task": "hi there", "profile": "precise"})
                          ).structured_content
                trace = (await host.call_tool("hermes_trace_get", {"run_id": second["run_id"]})).structured_content
    runs = [r.body for r in fake.received if "the user's timezone" in json.dumps(r.body)]  # the agent's requests
    [default] = [b for b in runs if "'hello'" in str(b["messages"][-1])]
    [precise] = [b for b in runs if "hi there" in str(b["messages"][-1])]
    assert (first["answer"], second["answer"]) == ("Done.", "Done.")
    assert (default["temperature"], default["max_tokens"], "top_p" in default) == (0.2, 4096, False)
    if v is OPENAI:
        assert (precise["temperature"], precise["top_p"], precise["max_tokens"]) == (0, 0.9, 512)
    else:  # Claude 4.x takes one of the two: the top_p someone set
        assert (precise["top_p"], precise["max_tokens"], "temperature" in precise) == (0.9, 512, False)
    budget = next(e for e in trace["events"] if e["kind"] == "budget")
    assert (budget["temperature"], budget["top_p"], budget["max_tokens"]) == (0, 0.9, 512)


async def test_claude_models_that_refuse_sampling_settings_get_max_tokens_only(tmp_path):
    fake = FakeVendor(ANTHROPIC.path)
    fake.answer(ANTHROPIC.text("Hi.", model="claude-opus-4-7"))
    async with served(fake) as url:
        provider = provider_for(ANTHROPIC, base_for(ANTHROPIC, url), model="claude-opus-4-7")
        try:
            await provider.complete([Message("user", "hi")], max_tokens=300, temperature=0.2)
        finally:  # closed in this test's event loop
            await OPENED.pop().aclose()
    body = fake.received[0].body
    assert (body["max_tokens"], "temperature" in body, "top_p" in body) == (300, False, False)


async def test_openai_reasoning_models_get_max_completion_tokens_and_no_temperature(tmp_path):
    fake = FakeVendor(OPENAI.path)
    fake.answer(OPENAI.text("Hi.", model="o3-mini"))
    async with served(fake) as url:
        provider = provider_for(OPENAI, url, model="o3-mini")
        try:
            await provider.complete([Message("user", "hi")], max_tokens=300, temperature=0.2)
        finally:  # closed in this test's event loop
            await OPENED.pop().aclose()
    body = fake.received[0].body
    assert (body["max_completion_tokens"], "max_tokens" in body, "temperature" in body) == (300, False, False)


@BOTH
@pytest.mark.slow
async def test_an_answer_cut_by_the_length_limit_is_continued_once_and_returned_whole(v: Vendor, tmp_path):
    fake = FakeVendor(v.path)
    fake.answer(cut(v, "The first half of a long answer, "))
    fake.answer(v.text("and the second half."))
    async with served(fake) as url, serve_process(hub_config(v, url, tmp_path), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                out = (await host.call_tool("hermes_agent_run", {"task": "write a long answer"})).structured_content
    assert (out["answer"], out["stop_reason"]) == ("The first half of a long answer, and the second half.", "answered")
    again = fake.received[1].body["messages"]
    assert "The first half of a long answer" in json.dumps(again[-2]) and CONTINUE in json.dumps(again[-1])


@BOTH
@pytest.mark.slow
async def test_an_answer_still_cut_after_the_continuation_says_so_with_stop_reason_length(v: Vendor, tmp_path):
    fake = FakeVendor(v.path)
    fake.answer(cut(v, "Part one, "))
    fake.answer(cut(v, "part two, "))
    async with served(fake) as url, serve_process(hub_config(v, url, tmp_path, max_tokens=64), tmp_path) as hub:
        with anyio.fail_after(60):
            async with Client(hub.url) as host:
                result = await host.call_tool("hermes_agent_run", {"task": "write a long answer"})
    out = result.structured_content
    assert out["stop_reason"] == "length"
    assert sum(CONTINUE in json.dumps(r.body) for r in fake.received) == 1  # continued once, not more
    assert out["answer"].startswith("Part one, part two, ")
    assert "[This answer was cut at the length limit (64 tokens) and is incomplete" in out["answer"]


async def test_the_scripted_model_cuts_at_max_tokens_in_its_own_terms_and_the_run_continues_it(tmp_path):
    rules = [{"when": "tell a long story", "text": "x" * 100}, {"when": "cut off by the length limit", "text": "END"}]
    (tmp_path / "model.json").write_text(json.dumps(rules))
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "agent": {"provider": "scripted", "script": "model.json", "max_tokens": 16}},
                          base_dir=tmp_path)
    async with Hub(config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            out = (await host.call_tool("hermes_agent_run", {"task": "tell a long story"})).structured_content
    assert (out["answer"], out["stop_reason"]) == ("x" * 64 + "END", "answered")  # 16 tokens of 4 characters


def test_the_request_never_leaves_less_than_max_tokens_of_the_window():
    known = parse_config({"mcpServers": {}, "agent": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                                                      "context_tokens": 250_000}}, env={})
    assert resolve(known, "default").context_window == 200_000  # known for the usual models
    assert resolve(known, "default").request_tokens == 200_000 - 4096
    small = parse_config({"mcpServers": {}, "agent": {"provider": "openai", "model": "llama3.2", "context_window": 8192},
                          "agents": {"long": {"max_tokens": 6000}}}, env={})
    assert resolve(small, "default").request_tokens == 8192 - 4096  # less than context_tokens (6000)
    assert resolve(small, "long").request_tokens == 8192 - 6000
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {}, "agent": {"max_tokens": 8192, "context_window": 8192}}, env={})
    assert "agent.max_tokens" in str(e.value) and "lower max_tokens or raise context_window" in str(e.value)


async def test_a_run_in_a_small_window_builds_its_request_within_the_room_left(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps([{"text": "ok"}]))
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "agent": {"provider": "scripted", "script": "model.json", "context_window": 5000,
                                     "max_tokens": 4000, "context_tokens": 6000}}, base_dir=tmp_path)
    async with Hub(config) as hub, hub.client() as host:
        with anyio.fail_after(60):
            for n in range(6):  # a session long enough not to fit
                session = {"session_id": sid} if n else {}
                out = (await host.call_tool("hermes_agent_run", {"task": f"note {n}: " + "words " * 60, **session})
                       ).structured_content
                sid = out["session_id"]
            trace = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
    budget = next(e for e in trace["events"] if e["kind"] == "budget")
    assert budget["request_tokens"] == 1000 and budget["tokens"]["total"] <= 1000
    assert budget["tokens"]["history"]["messages"] < 10  # older turns left out to keep the answer's room


def test_check_prints_the_model_settings_in_force(tmp_path):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "agent": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                                                           "api_key": KEY, "timezone": "Europe/Berlin"},
                               "agents": {"terse": {"max_tokens": 256, "temperature": 0}}}))
    result = CliRunner().invoke(main, ["check", str(cfg), "--no-start"])
    assert result.exit_code == 0, result.output
    assert ("model settings (default): temperature 0.2, top_p unset (the vendor's default), max_tokens 4096, "
            "context_window 200000 (known for this model), request budget 6000 tokens") in result.output
    assert "model settings (terse): temperature 0, top_p unset (the vendor's default), max_tokens 256" in result.output
    assert "agent time and memory: timezone Europe/Berlin; recall_min_score 0.55" in result.output
    assert KEY not in result.output
