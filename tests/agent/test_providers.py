"""The real anthropic and openai SDKs against local fakes of each vendor's API, and the scripted model."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import anyio
import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError
from hermes_hub.infra.models import Message, ProviderError, ToolCall, ToolSpec, Usage, make_provider
from hermes_hub.infra.models.scripted import ScriptedProvider
from tests.agent import vendors
from tests.agent.vendors import FakeVendor, served
from tests.support import PROJECT, free_port

KEY = "sk-test-Zq81secretvalue-wxQv"
FAST = {"retry-after-ms": "5"}  # the SDKs honour it, so retries in tests take milliseconds


@dataclass(frozen=True)
class Vendor:
    provider: str
    model: str
    path: str
    text: Callable[..., dict[str, Any]]
    tool_call: Callable[..., dict[str, Any]]
    error: Callable[[int, str], dict[str, Any]]
    key_env: str
    url_env: str
    overloaded: int  # the status the vendor uses for "overloaded"

    def key_sent(self, headers: dict[str, str]) -> str:
        # Anthropic's SDK 2.x sends its key as a bearer token too (x-api-key before).
        return headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")


OPENAI = Vendor("openai", "qwen-plus", "/v1/chat/completions", vendors.openai_text, vendors.openai_tool_call,
                vendors.openai_error, "OPENAI_API_KEY", "OPENAI_BASE_URL", 503)
ANTHROPIC = Vendor("anthropic", "claude-sonnet-4-5", "/v1/messages", vendors.anthropic_text,
                   vendors.anthropic_tool_call, vendors.anthropic_error, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", 529)
BOTH = pytest.mark.parametrize("v", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
WEATHER = ToolSpec("weather_get", "The weather in a city", {"type": "object", "properties": {"city": {"type": "string"}},
                                                            "required": ["city"]})


@pytest.fixture(autouse=True)
def _no_vendor_environment(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


OPENED: list[Any] = []


@pytest.fixture(autouse=True)
async def _close_providers():
    """Each provider's HTTP connections are closed in the event loop of the test that opened them."""
    yield
    while OPENED:
        await OPENED.pop().aclose()


def opened(provider: Any) -> Any:
    OPENED.append(provider)
    return provider


def provider_for(v: Vendor, base_url: str, **agent: Any):
    cfg = parse_config({"agent": {"provider": v.provider, "model": v.model, "base_url": base_url, "api_key": KEY,
                                  **agent}}, env={})
    return opened(make_provider(cfg.agent))


def strip_base(url: str) -> str:
    # Anthropic's SDK adds /v1 itself; OpenAI's expects it in base_url.
    return url.removesuffix("/v1")


def base_for(v: Vendor, url: str) -> str:
    return strip_base(url) if v.provider == "anthropic" else url


@BOTH
async def test_a_plain_answer_comes_back_with_its_usage_and_the_model_that_answered(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.text("Hello there.", model=f"{v.model}-2026", usage=(21, 4)))
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20):
            reply = await provider.complete([Message("user", "hi")], system="Be brief.", max_tokens=50)
    assert (reply.text, reply.tool_calls, reply.stop_reason) == ("Hello there.", (), "end")
    assert reply.usage == Usage(21, 4) and reply.model == f"{v.model}-2026"
    assert provider.name == f"{v.provider}:{v.model}"
    body = fake.received[0].body
    assert body["model"] == v.model and body["max_tokens"] == 50
    assert v.key_sent(fake.received[0].headers) == KEY


async def test_openai_tool_call_round_trip_speaks_chat_completions():
    fake = FakeVendor(OPENAI.path)
    fake.answer(vendors.openai_tool_call("call_abc", "weather_get", {"city": "Paris"}))
    fake.answer(vendors.openai_text("Sunny in Paris."))
    async with served(fake) as url:
        provider = provider_for(OPENAI, url)
        history = [Message("user", "Weather in Paris?")]
        with anyio.fail_after(20):
            first = await provider.complete(history, system="You help.", tools=[WEATHER])
            history += [Message("assistant", first.text, first.tool_calls),
                        Message("tool", '{"sky": "sunny"}', tool_call_id="call_abc"),
                        Message("tool", "no such city", tool_call_id="call_def", is_error=True)]
            final = await provider.complete(history, system="You help.", tools=[WEATHER])
    assert first.tool_calls == (ToolCall("call_abc", "weather_get", {"city": "Paris"}),)
    assert first.stop_reason == "tool_use" and first.usage == Usage(40, 9)
    assert final.text == "Sunny in Paris." and final.stop_reason == "end"
    sent_first, sent_final = (r.body for r in fake.received)
    assert sent_first["tools"] == [{"type": "function", "function": {
        "name": "weather_get", "description": "The weather in a city", "parameters": WEATHER.input_schema}}]
    assert sent_first["messages"] == [{"role": "system", "content": "You help."},
                                      {"role": "user", "content": "Weather in Paris?"}]
    assert sent_final["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "weather_get", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_abc", "content": '{"sky": "sunny"}'},
        {"role": "tool", "tool_call_id": "call_def", "content": "ERROR: no such city"},
    ]


async def test_anthropic_tool_call_round_trip_speaks_tool_use_and_tool_result_blocks():
    fake = FakeVendor(ANTHROPIC.path)
    fake.answer(vendors.anthropic_tool_call("toolu_01", "weather_get", {"city": "Paris"}))
    fake.answer(vendors.anthropic_text("Sunny in Paris."))
    async with served(fake) as url:
        provider = provider_for(ANTHROPIC, strip_base(url))
        history = [Message("user", "Weather in Paris?")]
        with anyio.fail_after(20):
            first = await provider.complete(history, system="You help.", tools=[WEATHER])
            history += [Message("assistant", first.text, first.tool_calls),
                        Message("tool", '{"sky": "sunny"}', tool_call_id="toolu_01"),
                        Message("tool", "no such city", tool_call_id="toolu_02", is_error=True)]
            final = await provider.complete(history, system="You help.", tools=[WEATHER])
    assert first.text == "Let me look." and first.stop_reason == "tool_use"
    assert first.tool_calls == (ToolCall("toolu_01", "weather_get", {"city": "Paris"}),)
    assert final.text == "Sunny in Paris."
    sent_first, sent_final = (r.body for r in fake.received)
    assert sent_first["system"] == "You help."
    assert sent_first["tools"] == [{"name": "weather_get", "description": "The weather in a city",
                                    "input_schema": WEATHER.input_schema}]
    # Both results share one user turn: the API wants the roles to alternate.
    assert sent_final["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                          {"type": "tool_use", "id": "toolu_01", "name": "weather_get",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": '{"sky": "sunny"}'},
            {"type": "tool_result", "tool_use_id": "toolu_02", "content": "no such city", "is_error": True}]},
    ]


@BOTH
async def test_a_refused_key_says_which_setting_to_fix_and_the_key_appears_nowhere(v: Vendor, caplog):
    caplog.set_level(logging.DEBUG)
    fake = FakeVendor(v.path)
    fake.answer(v.error(401, f"Incorrect API key provided: {KEY[:8]}...{KEY[-4:]} or {KEY}"), status=401)
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
            await provider.complete([Message("user", "hi")])
    err = caught.value
    assert str(err) == (f"the API key for provider '{v.provider}' was refused (HTTP 401); "
                        f"set agent.api_key or {v.key_env}")
    assert err.retryable is False and err.status == 401
    assert len(fake.received) == 1  # a refused key is not retried
    assert v.key_sent(fake.received[0].headers) == KEY
    assert "HTTP Request: POST" in caplog.text or "Request options" in caplog.text  # the SDK's own logs were read
    shown = [str(err), repr(err), repr(provider), caplog.text, repr(parse_config(
        {"agent": {"provider": v.provider, "model": "m", "api_key": KEY}}, env={}))]
    assert [s for s in shown if KEY in s or KEY[-4:] in s] == []


@BOTH
async def test_a_rate_limit_is_retried_by_the_sdk_and_then_answers(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.error(429, "slow down"), status=429, headers=FAST)
    fake.answer(v.text("Finally."))
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20):
            reply = await provider.complete([Message("user", "hi")])
    assert reply.text == "Finally." and len(fake.received) == 2


@BOTH
async def test_a_server_failing_every_time_is_retryable_and_reported_after_the_retries(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.error(500, "internal trouble"), status=500, headers=FAST, times=2)
    fake.answer(v.error(v.overloaded, "Overloaded"), status=v.overloaded, headers=FAST)
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url), max_retries=2)
        with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
            await provider.complete([Message("user", "hi")])
    assert len(fake.received) == 3  # the first try and max_retries=2
    assert caught.value.retryable is True and caught.value.status == v.overloaded
    assert str(caught.value) == (f"provider '{v.provider}' failed (HTTP {v.overloaded}: Overloaded), still after 2 "
                                 f"retries; try again later")


@BOTH
async def test_an_unknown_model_is_named_with_the_key_to_check(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.error(404, f"model {v.model} does not exist"), status=404)
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
            await provider.complete([Message("user", "hi")])
    assert f"has no model '{v.model}'" in str(caught.value) and "check agent.model" in str(caught.value)
    assert caught.value.retryable is False


@BOTH
async def test_a_server_that_is_not_running_is_named_by_its_base_url(v: Vendor):
    url = f"http://127.0.0.1:{free_port()}/v1"
    provider = provider_for(v, base_for(v, url), max_retries=0)
    with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
        await provider.complete([Message("user", "hi")])
    assert str(caught.value).startswith(f"cannot reach provider '{v.provider}' at {base_for(v, url)}")
    assert f"check agent.base_url (or {v.url_env})" in str(caught.value) and caught.value.retryable


@BOTH
async def test_a_vendor_slower_than_the_timeout_says_which_key_raises_it(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.text("Too late."), delay=5)
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url), timeout=0.3, max_retries=0)
        with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
            await provider.complete([Message("user", "hi")])
    assert str(caught.value) == (f"provider '{v.provider}' at {provider._endpoint.base_url} did not answer within "
                                 f"0.3 s (model '{v.model}'); raise agent.timeout or try again later")
    assert caught.value.retryable


@BOTH
async def test_the_sdks_environment_variables_are_used_when_hub_json_has_no_key_or_url(v: Vendor, monkeypatch):
    fake = FakeVendor(v.path)
    fake.answer(v.text("From the environment."))
    async with served(fake) as url:
        monkeypatch.setenv(v.key_env, KEY)
        monkeypatch.setenv(v.url_env, base_for(v, url))
        provider = opened(make_provider(parse_config({"agent": {"provider": v.provider, "model": v.model}},
                                                     env={}).agent))
        with anyio.fail_after(20):
            reply = await provider.complete([Message("user", "hi")])
    assert reply.text == "From the environment." and v.key_sent(fake.received[0].headers) == KEY


@BOTH
async def test_no_key_anywhere_fails_before_any_request_saying_where_to_put_one(v: Vendor):
    provider = opened(make_provider(parse_config({"agent": {"provider": v.provider, "model": v.model}},
                                                 env={}).agent))
    with pytest.raises(ProviderError, match=rf"no API key for provider '{v.provider}'; set agent.api_key in "
                                            rf"hub.json or the {v.key_env} environment variable"):
        await provider.complete([Message("user", "hi")])


@BOTH
async def test_json_output_asks_for_a_json_object_and_returns_it_without_fences(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer(v.text('```json\n{"memories": []}\n```'))
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20):
            reply = await provider.complete([Message("user", "extract")], system="Extract.", json_output=True)
    assert json.loads(reply.text) == {"memories": []}
    body = fake.received[0].body
    if v is OPENAI:
        assert body["response_format"] == {"type": "json_object"}
        assert "JSON" in body["messages"][0]["content"]
    else:
        assert body["system"].startswith("Extract.") and "JSON object" in body["system"]


# The scripted model.

def scripted(tmp_path: Path, rules: Any, name: str = "rules.json"):
    (tmp_path / name).write_text(rules if isinstance(rules, str) else json.dumps(rules))
    cfg = parse_config({"agent": {"provider": "scripted", "script": name}}, base_dir=tmp_path, env={})
    return make_provider(cfg.agent)


async def test_scripted_answers_with_the_first_matching_rule_until_it_is_used_up(tmp_path):
    provider = scripted(tmp_path, [
        {"when": "(?i)weather", "tool_calls": [{"name": "weather_get", "arguments": {"city": "Paris"}},
                                               {"name": "clock_now"}]},
        {"when": "sunny", "text": "It is sunny.", "times": 1},
        {"when": "extract", "json": {"memories": ["likes tea"]}},
        {"text": "I don't know."},
    ])
    assert provider.name == "scripted:rules.json"
    first = await provider.complete([Message("user", "What's the WEATHER?")], tools=[WEATHER])
    assert first.tool_calls == (ToolCall("call_1_1", "weather_get", {"city": "Paris"}),
                                ToolCall("call_1_2", "clock_now", {}))
    assert first.stop_reason == "tool_use"
    # After the model's turn only the tool results are searched, not the question before them.
    history = [Message("user", "What's the weather?"), Message("assistant", "", first.tool_calls),
               Message("tool", "sunny", tool_call_id="call_1_1"), Message("tool", "noon", tool_call_id="call_1_2")]
    assert (await provider.complete(history)).text == "It is sunny."
    assert (await provider.complete(history)).text == "I don't know."  # the sunny rule answered its one time
    extracted = await provider.complete([Message("user", "extract this")], json_output=True)
    assert json.loads(extracted.text) == {"memories": ["likes tea"]} and extracted.stop_reason == "end"


async def test_scripted_with_no_matching_rule_names_the_file_and_the_text(tmp_path):
    provider = scripted(tmp_path, [{"when": "hello", "text": "Hi!", "times": 1}])
    await provider.complete([Message("user", "hello")])
    with pytest.raises(ProviderError) as caught:
        await provider.complete([Message("user", "hello again")])
    assert str(caught.value) == (f"scripted model {tmp_path / 'rules.json'}: no rule matches 'hello again' "
                                 f"(1 rule used up); add a rule whose 'when' matches it, or one without 'when'")


@pytest.mark.parametrize("content, problem", [
    (None, "file not found (a relative agent.script is relative to hub.json's folder)"),
    ('[{"text": "hi"},]', "not valid JSON at line 1, column 16: a trailing comma before ']' (JSON allows none)"),
    ('{"when": "x", "text": "y"}', "the file must hold a JSON list of rules"),
    ('[{"text": "ok"}, {"whan": "x", "text": "y"}]', "rule [1].whan: unknown key; rules know when, text, json"),
    ('[{"when": "(unclosed", "text": "y"}]', "rule [0].when: 'when' is not a valid regular expression"),
    ('[{"when": "x"}]', "rule [0]: a rule needs 'text', 'json' or 'tool_calls'"),
    ('[{"tool_calls": [{"arguments": {}}]}]', "rule [0].tool_calls[0].name: Field required"),
])
async def test_a_bad_script_file_is_a_config_error_naming_the_file_and_the_problem(tmp_path, content, problem):
    if content is not None:
        (tmp_path / "rules.json").write_text(content)
    cfg = parse_config({"agent": {"provider": "scripted", "script": "rules.json"}}, base_dir=tmp_path, env={})
    with pytest.raises(ConfigError) as caught:
        make_provider(cfg.agent)
    [(key, message)] = caught.value.problems
    assert key == "agent.script" and message.startswith(f"{tmp_path / 'rules.json'}: {problem}")


async def test_no_provider_configured_is_a_clear_error():
    with pytest.raises(ProviderError, match="no model is configured; set agent.provider"):
        make_provider(parse_config({}, env={}).agent)


async def test_the_readme_script_example_loads_and_answers(tmp_path):
    readme = (PROJECT / "docs" / "agent.md").read_text()
    [rules] = re.findall(r"```jsonc\n(.*?)```", readme, flags=re.S)
    provider = scripted(tmp_path, rules)
    reply = await provider.complete([Message("user", "Extract what matters.")], json_output=True)
    assert json.loads(reply.text)["memories"][0]["kind"] == "preference"


@BOTH
async def test_an_answer_in_another_shape_says_to_check_the_base_url(v: Vendor):
    fake = FakeVendor(v.path)
    fake.answer({"hello": "this is not a model API"})
    async with served(fake) as url:
        provider = provider_for(v, base_for(v, url))
        with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
            await provider.complete([Message("user", "hi")])
    assert "check agent.base_url" in str(caught.value), str(caught.value)


async def test_a_scripted_rule_with_task_answers_only_the_runs_whose_last_user_message_matches(tmp_path):
    (tmp_path / "rules.json").write_text(json.dumps([
        {"task": "^plan", "when": "^ok$", "text": "planned"}, {"when": "^ok$", "text": "other"}]))
    model = ScriptedProvider(tmp_path / "rules.json")
    asked = [Message("user", "plan my day"), Message("assistant", "", tool_calls=(ToolCall("c", "t", {}),)),
             Message("tool", "ok", tool_call_id="c")]
    assert (await model.complete(asked)).text == "planned"
    assert (await model.complete([Message("user", "hello"), *asked[1:]])).text == "other"
