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
    cfg = parse_config({"mcpServers": {"gh": {"url": "http://x", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}}},
                       env={})
    assert "mcpServers.gh.headers.Authorization: environment variable GH_TOKEN is not set" in cfg.mcp_servers["gh"].held_back


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


@pytest.mark.parametrize("text, says", [
    ('{"mcpServers": {\n  "a": {"command": "x",}\n}}',
     "not valid JSON at line 2, column 23: a trailing comma before '}' (JSON allows none); remove the comma"),
    ('{"mcpServers": {\n  "a": {"command": "x"}\n  ,\n]}',  # the comma's own line, not the bracket's
     "not valid JSON at line 3, column 3: a trailing comma before ']'"),
    ('{"mcpServers": {"a": {"command": "x",\n\n  }}}', "line 1, column 37: a trailing comma before '}'"),
    ('{\n  // my servers\n  "mcpServers": {}\n}', "line 2, column 3: comments are not allowed in JSON"),
    ('{"mcpServers": {} /* none yet */}', "line 1, column 19: comments are not allowed in JSON"),
    ("{'mcpServers': {}}", "line 1, column 2: JSON strings and keys take double quotes (\"), not single ones (')"),
    ('{"mcpServers" {}}', "not valid JSON at line 1, column 15: Expecting ':' delimiter"),
])
def test_broken_json_says_what_is_wrong_with_its_line_and_column(tmp_path, text, says):
    path = tmp_path / "hub.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert says in str(err.value)
    assert path.read_text() == text


def test_an_unset_variable_in_one_server_holds_back_that_server_alone():
    raw = {"mcpServers": {
        "notes": {"command": "x", "env": {"HOME_DIR": "${HOME_DIR}", "MODE": "${MODE:-fast}"}},
        "github": {"command": "npx", "args": ["-y", "gh"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "${MODE:-fast}"}},
        "remote": {"url": "${REMOTE_URL}", "headers": {"Authorization": "Bearer ${API_KEY}"}}}}
    cfg = parse_config(raw, env={"HOME_DIR": "/h"})
    assert list(cfg.mcp_servers) == ["notes", "github", "remote"]
    assert cfg.mcp_servers["notes"].held_back is None and cfg.mcp_servers["notes"].env == {"HOME_DIR": "/h", "MODE": "fast"}
    github = cfg.mcp_servers["github"]
    assert github.env == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "fast"}  # as written, the defaults applied
    assert github.held_back == (
        "not started, a config error: mcpServers.github.env.GITHUB_TOKEN: environment variable GITHUB_TOKEN is not "
        "set; export it or write ${GITHUB_TOKEN:-default} (then restart the hub, or reload it after editing hub.json)")
    remote = cfg.mcp_servers["remote"]
    assert "mcpServers.remote.url: environment variable REMOTE_URL" in remote.held_back
    assert "mcpServers.remote.headers.Authorization: environment variable API_KEY" in remote.held_back
    assert cfg.warnings == [
        "mcpServers.github: held back, the other servers start: mcpServers.github.env.GITHUB_TOKEN: environment "
        "variable GITHUB_TOKEN is not set; export it or write ${GITHUB_TOKEN:-default}",
        "mcpServers.remote: held back, the other servers start: mcpServers.remote.url: environment variable "
        "REMOTE_URL is not set; export it or write ${REMOTE_URL:-default} (and 1 more)"]


def test_an_unset_variable_outside_the_servers_still_makes_the_file_invalid():
    found, _ = problems({"mcpServers": {"s": {"command": "x"}}, "storage": {"url": "${DATABASE_URL}"}})
    assert found["storage.url"].startswith("environment variable DATABASE_URL is not set")


def test_a_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "nope.json")
    assert "file not found" in str(err.value) and "--config PATH" in str(err.value)


def test_relative_cwd_resolves_against_the_config_files_directory(tmp_path):
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {"s": {"command": "x", "cwd": "sub"}}}))
    cfg = load_config(tmp_path / "hub.json")
    assert cfg.base_dir / cfg.mcp_servers["s"].cwd == tmp_path / "sub"
