"""hub.json's ``agent`` section: parsed with key paths, secrets hidden, checked by ``hermes-hub check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_hub.app.cli import main
from hermes_hub.infra.config import parse_config
from hermes_hub.infra.errors import ConfigError


def check(tmp_path: Path, agent: dict, env: dict[str, str] | None = None) -> Result:
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {}, "agent": agent}))
    base = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None, "ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None}
    result = CliRunner().invoke(main, ["check", str(path)], env={**base, **(env or {})})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_the_api_key_expands_from_the_environment_and_never_shows_in_the_config_repr():
    cfg = parse_config({"agent": {"provider": "openai", "model": "qwen-plus", "api_key": "${DASHSCOPE_KEY}",
                                  "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1"}},
                       env={"DASHSCOPE_KEY": "sk-dash-secret-77"})
    assert cfg.agent.api_key is not None and cfg.agent.api_key.get_secret_value() == "sk-dash-secret-77"
    assert "sk-dash-secret-77" not in repr(cfg) and "sk-dash-secret-77" not in str(cfg.model_dump())


@pytest.mark.parametrize("agent, problem", [
    ({"provider": "scripted"}, "agent.script: provider 'scripted' needs 'script'"),
    ({"provider": "anthropic"}, "agent.model: provider 'anthropic' needs 'model', e.g. \"claude-sonnet-4-5\""),
    ({"provider": "gemini"}, "agent.provider: Input should be 'anthropic', 'openai', 'sampling' or 'scripted'"),
    ({"provider": "openai", "model": "m", "timout": 5}, "agent.timout: unknown key; did you mean 'timeout'?"),
    ({"provider": "openai", "model": "m", "max_retries": -1}, "agent.max_retries: Input should be greater"),
])
def test_an_incomplete_agent_section_names_the_key_path(agent, problem):
    with pytest.raises(ConfigError) as caught:
        parse_config({"agent": agent}, env={})
    assert [f"{k}: {m}" for k, m in caught.value.problems][0].startswith(problem)


def test_a_typo_in_the_section_name_suggests_agent():
    with pytest.raises(ConfigError, match="agnet: unknown key; did you mean 'agent'"):
        parse_config({"agnet": {}}, env={})


def test_check_accepts_a_scripted_model_whose_file_parses(tmp_path):
    (tmp_path / "rules.json").write_text('[{"text": "Hi!"}]')
    result = check(tmp_path, {"provider": "scripted", "script": "rules.json"})
    assert result.exit_code == 0 and result.stderr == ""


def test_check_names_a_missing_script_file_relative_to_hub_json(tmp_path):
    result = check(tmp_path, {"provider": "scripted", "script": "rules.json"})
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: agent.script: {tmp_path / 'rules.json'}: file not found (a relative agent.script is relative to "
        f"hub.json's folder); create it or fix the path",
        f"error: {tmp_path / 'hub.json'}: the model in 'agent' cannot answer (see above)",
    ]


def test_check_says_where_a_script_file_is_not_valid_json(tmp_path):
    (tmp_path / "rules.json").write_text('[\n  {"text": "Hi!"\n]')
    result = check(tmp_path, {"provider": "scripted", "script": "rules.json"})
    assert result.exit_code == 1
    assert f"error: agent.script: {tmp_path / 'rules.json'}: not valid JSON at line 3, column 1" in result.stderr


def test_check_warns_when_a_vendor_has_no_key_in_hub_json_or_the_environment(tmp_path):
    without = check(tmp_path, {"provider": "openai", "model": "gpt-4o-mini"})
    with_env = check(tmp_path, {"provider": "openai", "model": "gpt-4o-mini"}, env={"OPENAI_API_KEY": "sk-x"})
    assert without.exit_code == 0 and with_env.exit_code == 0
    assert without.stderr == ("warning: agent.api_key: provider 'openai' has no API key; set agent.api_key or "
                              "OPENAI_API_KEY\n")
    assert with_env.stderr == ""


def test_a_section_built_in_code_is_checked_when_its_provider_is_made():
    from hermes_hub.infra.config import AgentSection
    from hermes_hub.infra.models import make_provider

    with pytest.raises(ConfigError, match="agent.model: provider 'openai' needs 'model'"):
        make_provider(AgentSection(provider="openai"))


def test_a_profile_that_overrides_the_model_is_checked_under_its_own_key_path():
    with pytest.raises(ConfigError) as err:
        parse_config({"agent": {"provider": "scripted", "script": "a.json"},
                      "agents": {"planner": {"provider": "openai"}}}, env={})
    assert str(err.value).splitlines()[-1].strip().startswith(
        "agents.planner.model: provider 'openai' needs 'model'")
    cfg = parse_config({"agent": {"provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-1"},
                        "agents": {"planner": {"model": "qwen-plus", "base_url": "http://127.0.0.1:9/v1"},
                                   "plain": {}}}, env={})
    planner = cfg.model_settings("planner")
    assert (planner.provider, planner.model, planner.base_url) == ("openai", "qwen-plus", "http://127.0.0.1:9/v1")
    assert planner.api_key.get_secret_value() == "sk-1"  # the rest comes from agent
    assert cfg.model_settings("plain") is cfg.agent and cfg.model_settings("default") is cfg.agent
