"""hub.json: Claude-Desktop entries paste in; every mistake is named by its key path."""

import json

import pytest

from hermes_hub.infra.config import load_config, parse_config
from hermes_hub.infra.errors import ConfigError
from tests.support import PROJECT


def problems(raw, env=None):
    with pytest.raises(ConfigError) as err:
        parse_config(raw, env=env or {})
    return dict(err.value.problems), str(err.value)


def test_the_bundled_hub_json_is_valid():
    cfg = load_config(PROJECT / "hub.json")
    assert list(cfg.mcp_servers) == ["calendar", "reminders", "notes"]
    assert cfg.base_dir == PROJECT


def test_a_claude_desktop_entry_pastes_in_unchanged_with_foreign_keys_ignored():
    raw = {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
                                 "env": {"A": "1"}, "autoApprove": []},
                          "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"X": "y"}}},
           "globalShortcut": "Ctrl+Space"}
    cfg = parse_config(raw, env={})
    assert cfg.mcp_servers["fs"].transport == "stdio"
    assert cfg.mcp_servers["web"].transport == "http"
    assert cfg.prefix_of("fs") == "fs"


def test_a_typo_in_a_hermes_key_is_an_error_that_suggests_the_right_key():
    found, _ = problems({"mcpServers": {"notes": {"command": "x", "prefx": "n"}}, "hub": {"separatr": "_"}})
    assert found["mcpServers.notes.prefx"] == "unknown key; did you mean 'prefix'?"
    assert found["hub.separatr"] == "unknown key; did you mean 'separator'?"


def test_a_bad_list_item_is_named_by_its_index():
    found, text = problems({"mcpServers": {"notes": {"command": "x", "tools": {"allow": ["a", "b", 3]}}}})
    assert "mcpServers.notes.tools.allow[2]" in found
    assert "mcpServers.notes.tools.allow[2]: Input should be a valid string (got 3)" in text


def test_variables_expand_from_the_environment_with_defaults_and_escapes():
    raw = {"mcpServers": {"s": {"command": "x", "env": {"T": "${TOKEN}", "D": "${NOPE:-fallback}", "L": "$${TOKEN}"}}}}
    cfg = parse_config(raw, env={"TOKEN": "s3cret"})
    assert cfg.mcp_servers["s"].env == {"T": "s3cret", "D": "fallback", "L": "${TOKEN}"}


def test_a_missing_environment_variable_is_named_with_its_key_path():
    found, _ = problems({"mcpServers": {"gh": {"url": "http://x", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}}})
    assert found["mcpServers.gh.headers.Authorization"].startswith("environment variable GH_TOKEN is not set")


@pytest.mark.parametrize("entry, message", [
    ({}, "needs 'command' (a stdio server) or 'url' (a streamable HTTP server)"),
    ({"command": "x", "url": "http://y"}, "give either 'command' (stdio) or 'url' (HTTP), not both"),
    ({"command": "x", "mode": "2024"}, "Input should be 'auto', 'legacy' or '2026-07-28'"),
    ({"command": "x", "prefix": "a b"}, "prefix 'a b' may only contain letters, digits, '_' and '-'"),
    ({"command": "x", "timeout": 0}, "Input should be greater than 0"),
])
def test_invalid_server_entries_say_what_to_write(entry, message):
    _, text = problems({"mcpServers": {"s": entry}})
    assert message in text


def test_a_misspelt_top_level_key_is_caught():
    found, _ = problems({"mcpservers": {}})
    assert found["mcpservers"] == "unknown key; did you mean 'mcpServers'?"


def test_broken_json_reports_line_and_column(tmp_path):
    path = tmp_path / "hub.json"
    path.write_text('{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "not valid JSON at line 2, column 24: Expecting property name" in str(err.value)


def test_a_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "nope.json")
    assert "file not found" in str(err.value) and "--config PATH" in str(err.value)


def test_relative_cwd_resolves_against_the_config_files_directory(tmp_path):
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {"s": {"command": "x", "cwd": "sub"}}}))
    cfg = load_config(tmp_path / "hub.json")
    assert cfg.base_dir / cfg.mcp_servers["s"].cwd == tmp_path / "sub"
