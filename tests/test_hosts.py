"""``hermes-hub install`` and ``import`` on real files under a temporary HOME, for each host's format and place."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from hermes_hub.app.cli import main
from hermes_hub.app.cli.hosts import HOSTS
from tests.support import PROJECT, as_user, demo, hub_env, serve_process, until_listed

pytestmark = pytest.mark.anyio
WHERE = {  # on Linux, under HOME (XDG_CONFIG_HOME unset)
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
    "claude-code": (".claude.json", "mcpServers"),
    "gemini": (".gemini/settings.json", "mcpServers"),
    "qwen": (".qwen/settings.json", "mcpServers"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers"),
    "opencode": (".config/opencode/opencode.json", "mcp"),
    "copilot": (".copilot/mcp-config.json", "mcpServers"),
    "zed": (".config/zed/settings.json", "context_servers"),
}


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    for host in HOSTS.values():
        monkeypatch.delenv(host.env_var, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hub.json").write_text(json.dumps({"mcpServers": {"notes": demo("notes", tmp_path / "data")}}))
    return home


def hermes(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def host_file(home: Path, host: str, text: str) -> Path:
    """``host``'s config file at its place under ``home``, holding ``text``."""
    path = home / WHERE[host][0] if host in WHERE else home / {"codex": ".codex/config.toml"}[host]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.*.bak"))


@pytest.mark.parametrize("host", list(WHERE))
def test_install_writes_the_hub_entry_at_the_hosts_place_keeping_everything_else(home, tmp_path, host):
    rel, key = WHERE[host]
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    before = {"theme": "dark", key: {"github": {"command": "npx", "args": ["-y", "gh"], "env": {"T": "${T}"}}}}
    path.write_text(json.dumps(before))

    code, out, err = hermes("install", host)
    assert code == 0, err
    doc = json.loads(path.read_text())
    assert doc["theme"] == "dark" and doc[key]["github"] == before[key]["github"]
    entry = doc[key]["hermes"]
    if host == "opencode":  # its own shape: the command as one array, "environment"
        assert (entry["type"], entry["enabled"]) == ("local", True)
        entry = {"command": entry["command"][0], "args": entry["command"][1:], "env": entry["environment"]}
    assert entry["args"][-4:] == ["serve", "--stdio", "--config", str(tmp_path / "hub.json")]
    assert entry["env"]["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert ("type" in entry) == (host in ("vscode", "claude-code", "copilot"))
    assert entry.get("tools") == (["*"] if host == "copilot" else None)  # Copilot CLI: which tools it may call
    [backup] = backups(path)
    assert json.loads(backup.read_text()) == before
    assert str(path) in out

    code, out, _ = hermes("install", host)  # idempotent: no change, no second backup
    assert code == 0 and "nothing changed" in out
    assert json.loads(path.read_text()) == doc and len(backups(path)) == 1


def test_install_writes_the_venvs_bin_and_the_standard_folders_as_path_never_the_callers_path(home, monkeypatch):
    monkeypatch.setenv("PATH", f"/home/someone/secret-tools:{os.environ['PATH']}")

    code, _, err = hermes("install", "claude-desktop")

    assert code == 0, err
    entry = json.loads((home / WHERE["claude-desktop"][0]).read_text())["mcpServers"]["hermes"]
    assert entry["env"] == {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"}  # as the README


def test_on_macos_the_entrys_path_has_homebrews_bin_too():
    from hermes_hub.app.cli.hosts import hub_entry

    entry = hub_entry(Path("hub.json"), typed=False, platform="darwin")

    assert entry["env"]["PATH"] == f"{Path(sys.executable).parent}:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"


def test_install_creates_a_missing_config_file_and_its_folders(home):
    code, _, err = hermes("install", "claude-desktop", "--name", "hub")
    path = home / WHERE["claude-desktop"][0]
    assert code == 0, err
    assert list(json.loads(path.read_text())["mcpServers"]) == ["hub"] and backups(path) == []


def test_dry_run_prints_a_diff_and_writes_nothing(home):
    path = home / ".cursor/mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "mcpServers": {}\n}\n')
    code, out, _ = hermes("install", "cursor", "--dry-run")
    assert code == 0
    assert out.startswith("---") and '+    "hermes": {' in out and "serve" in out
    assert path.read_text() == '{\n  "mcpServers": {}\n}\n' and backups(path) == []


@pytest.mark.parametrize("text, says", [
    ('{"mcpServers": {"a": {"command": "x"},}}', "not valid JSON (line 1, column 38: a trailing comma before '}'"),
    ("// my servers\n{}", "(line 1, column 1: comments are not allowed in JSON; remove the comment); fix it"),
    ('["not", "an", "object"]', "JSON object"),
    ('{"mcpServers": ["a", "b"]}', "'mcpServers' in"),
])
def test_a_malformed_host_config_is_a_clear_error_and_nothing_is_written(home, text, says):
    path = home / ".cursor/mcp.json"
    path.parent.mkdir()
    path.write_text(text)
    code, _, err = hermes("install", "cursor")
    assert code == 1 and says in err and "othing was written" in err
    assert path.read_text() == text and backups(path) == []


def test_install_never_replaces_another_server_of_the_same_name(home):
    path = home / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {"hermes": {"command": "hermes-the-bot"}}}))
    code, _, err = hermes("install", "claude-code")
    assert code == 1 and "not this hub" in err and "--name" in err
    assert json.loads(path.read_text()) == {"mcpServers": {"hermes": {"command": "hermes-the-bot"}}}


def test_install_refuses_an_invalid_hub_json(home, tmp_path):
    (tmp_path / "hub.json").write_text('{"mcpServers": {"x": {}}}')
    code, _, err = hermes("install", "cursor")
    assert code == 2 and "hermes-hub check" in err and not (home / ".cursor").exists()


def test_the_location_follows_the_os_and_an_environment_variable_overrides_it(tmp_path):
    env = {"HOME": "/h", "APPDATA": "C:/Users/ana/AppData/Roaming"}
    assert HOSTS["claude-desktop"].path(env, "darwin") == Path(
        "/h/Library/Application Support/Claude/claude_desktop_config.json")
    assert HOSTS["claude-desktop"].path(env, "win32") == Path(
        "C:/Users/ana/AppData/Roaming/Claude/claude_desktop_config.json")
    assert HOSTS["vscode"].path({**env, "XDG_CONFIG_HOME": "/x"}, "linux") == Path("/x/Code/User/mcp.json")
    assert HOSTS["cursor"].path(env, "win32") == Path("/h/.cursor/mcp.json")
    assert HOSTS["cursor"].path({**env, "HERMES_CURSOR_CONFIG": str(tmp_path / "c.json")}) == tmp_path / "c.json"


@pytest.mark.slow
async def test_the_installed_entry_starts_the_hub_over_stdio(home):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    code, _, err = hermes("install", "claude-desktop")
    assert code == 0, err
    entry = json.loads((home / WHERE["claude-desktop"][0]).read_text())["mcpServers"]["hermes"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(PROJECT),
                                   env={**entry["env"], **hub_env()})  # as a host starts it: its env only
    with anyio.fail_after(60):
        async with Client(stdio_client(params)) as client:
            first = {t.name for t in (await client.list_tools()).tools}  # at once: what is READY
            await until_listed(client, "notes_create_note", timeout=None)  # the rest as it comes up
    assert "hermes_memory_recall" in first  # the hub's own four (hub.own_tools), before any server


def test_import_brings_a_hosts_servers_into_hub_json_keeping_var_references(home, tmp_path):
    path = home / ".config/Claude/claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "gh"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "remote": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
        "hermes": {"command": "/opt/venv/bin/hermes-hub", "args": ["serve", "--stdio", "--config", "/x/hub.json"]},
        "notes": {"command": "other-notes"},
        "broken": {"command": "a", "url": "http://b"},
    }}))
    hub = tmp_path / "hub.json"
    before = json.loads(hub.read_text())
    code, out, err = hermes("import", "claude-desktop")
    assert code == 0, err
    doc = json.loads(hub.read_text())
    assert doc["mcpServers"]["github"]["env"] == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
    assert doc["mcpServers"]["remote"]["headers"] == {"Authorization": "Bearer ${API_KEY}"}
    assert doc["mcpServers"]["notes"] == before["mcpServers"]["notes"]  # a clash is reported, not overwritten
    assert "hermes" not in doc["mcpServers"] and "broken" not in doc["mcpServers"]
    assert "added github" in out and "skipped hermes: it runs a hermes hub" in out
    assert "skipped broken: mcpServers.broken: give either 'command'" in out
    assert "clash notes" in err
    assert [json.loads(b.read_text()) for b in backups(hub)] == [before]
    code, out, _ = hermes("import", "claude-desktop")
    assert code == 0 and "nothing to add" in out and len(backups(hub)) == 1


def test_import_reads_vscode_servers_and_any_file_by_path(home, tmp_path):
    path = home / ".config/Code/User/mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"inputs": [], "servers": {
        "fs": {"type": "stdio", "command": "npx", "args": ["-y", "fs", "${HOME}"]},
        "asks": {"type": "stdio", "command": "x", "env": {"KEY": "${input:key}"}}}}))
    code, out, err = hermes("import", "vscode")
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["fs"]["args"][-1] == "${HOME}" and "asks" not in servers and "${input:" in out

    other = tmp_path / "team.json"
    other.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    code, out, _ = hermes("import", str(other), "--dry-run")
    assert "would add time\n" in out and "added" not in out  # a dry run adds nothing, and says so
    assert code == 0 and '"notes": {' in out and ', "time": {"command": "uvx", "args": ["mcp-server-time"]}}}' in out
    assert "time" not in json.loads((tmp_path / "hub.json").read_text())["mcpServers"]


HUB_JSON_4_SPACES = """{
    "hub": {"name": "mine"},
    "mcpServers": {
        "notes": {"command": "python", "args": ["-m", "notes"]},
        "files": {
            "command": "npx",
            "args": ["-y", "fs", "/srv"]
        }
    },
    "logging": {"level": "info"}
}
"""


def import_time_server(home: Path) -> None:
    host = home / ".cursor/mcp.json"
    host.parent.mkdir(parents=True, exist_ok=True)
    host.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]},
                                               "git": {"command": "uvx", "args": ["mcp-server-git"]}}}))


def test_import_keeps_hub_jsons_indentation_and_key_order_so_a_diff_shows_only_the_added_servers(home, tmp_path):
    import difflib

    hub = tmp_path / "hub.json"
    hub.write_text(HUB_JSON_4_SPACES)
    import_time_server(home)
    code, out, err = hermes("import", "cursor")
    assert code == 0, err
    after = hub.read_text()
    changed = [line for line in difflib.unified_diff(HUB_JSON_4_SPACES.splitlines(), after.splitlines(), lineterm="",
                                                     n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == [  # nothing removed: "}," after the last old server, then the new ones, 4 spaces deep
        "+        },",
        '+        "time": {', '+            "command": "uvx",', '+            "args": [', '+                "mcp-server-time"',
        "+            ]", "+        },",
        '+        "git": {', '+            "command": "uvx",', '+            "args": [', '+                "mcp-server-git"',
        "+            ]"]
    assert list(json.loads(after)) == ["hub", "mcpServers", "logging"] and after.endswith("}\n")
    assert list(json.loads(after)["mcpServers"]) == ["notes", "files", "time", "git"]


@pytest.mark.parametrize("before, looks", [
    ('{\n\t"mcpServers": {\n\t\t"notes": {"command": "n"}\n\t}\n}', '{\n\t"mcpServers": {\n\t\t"notes": {"command": "n"},\n'
                                                                  '\t\t"time": {\n\t\t\t"command": "uvx",'),
    ('{"mcpServers": {"notes": {"command": "n"}}}\n', '{"mcpServers": {"notes": {"command": "n"}, "time": {"command": '),
    ('{\r\n  "mcpServers": {}\r\n}\r\n', '{\r\n  "mcpServers": {\r\n    "time": {\r\n      "command": "uvx",\r\n'),
    ('{\n  "hub": {}\n}\n', '{\n  "hub": {},\n  "mcpServers": {\n    "time": {\n      "command": "uvx",\n'),
], ids=["tabs-no-final-newline", "one-line", "crlf-empty-servers", "no-servers-key"])
def test_import_writes_hub_json_in_the_style_it_found(home, tmp_path, before, looks):
    hub = tmp_path / "hub.json"
    hub.write_bytes(before.encode())
    import_time_server(home)
    code, _, err = hermes("import", "cursor")
    assert code == 0, err
    after = hub.read_bytes().decode()
    assert after.startswith(looks)
    assert after.endswith("\n") == before.endswith("\n") and ("\r\n" in after) == ("\r\n" in before)
    assert list(json.loads(after)["mcpServers"])[-2:] == ["time", "git"]


def test_install_adds_the_hub_without_touching_the_hosts_other_lines(home):
    path = home / ".config/Claude/claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    before = '{\n  "mcpServers": {\n    "gh": {"command": "npx", "args": ["-y", "gh"]}\n  },\n  "theme": "dark"\n}\n'
    path.write_text(before)
    code, _, err = hermes("install", "claude-desktop")
    assert code == 0, err
    after = path.read_text()
    assert after.startswith('{\n  "mcpServers": {\n    "gh": {"command": "npx", "args": ["-y", "gh"]},\n    "hermes": {\n')
    assert after.endswith('\n    }\n  },\n  "theme": "dark"\n}\n')


def test_import_of_a_malformed_file_writes_nothing(home, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": ')
    hub_before = (tmp_path / "hub.json").read_text()
    code, _, err = hermes("import", str(bad))
    assert code == 1 and "not valid JSON" in err
    assert (tmp_path / "hub.json").read_text() == hub_before and backups(tmp_path / "hub.json") == []
    code, _, err = hermes("import", "cursor")  # no such file at the host's place
    assert code == 1 and "nothing to import" in err


@pytest.mark.parametrize("host, url_key", [("gemini", "httpUrl"), ("qwen", "httpUrl"), ("windsurf", "serverUrl")])
def test_import_reads_a_hosts_own_http_key_as_hub_jsons_url(home, tmp_path, host, url_key):
    rel, key = WHERE[host]
    path = home / rel
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"theme": "Dracula", key: {
        "docs": {url_key: "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_KEY}"}},
        "fs": {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "${HOME}"}}}}))
    code, out, err = hermes("import", host)
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["docs"] == {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_KEY}"}}
    assert servers["fs"] == {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "${HOME}"}}
    assert "added docs" in out and "added fs" in out
    assert json.loads(path.read_text())["theme"] == "Dracula"  # the host's file is only read


def test_import_turns_opencodes_local_and_remote_entries_into_hub_json_servers(home, tmp_path):
    path = home / ".config/opencode/opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"$schema": "https://opencode.ai/config.json", "mcp": {
        "fs": {"type": "local", "command": ["npx", "-y", "fs"], "environment": {"ROOT": "${HOME}"}, "enabled": True},
        "off": {"type": "local", "command": ["uvx", "old-server"], "enabled": False},
        "docs": {"type": "remote", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${K}"}}}}))
    assert hermes("install", "opencode")[0] == 0  # the hub's own entry there is skipped on import
    code, out, err = hermes("import", "opencode")
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["fs"] == {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "${HOME}"}}
    assert servers["off"] == {"command": "uvx", "args": ["old-server"], "disabled": True}
    assert servers["docs"] == {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${K}"}}
    assert "skipped hermes: it runs a hermes hub" in out


CODEX = """# my Codex settings
model = "gpt-5-codex"  # the model I use

[mcp_servers.docs]
url = "https://mcp.example/mcp"
bearer_token_env_var = "DOCS_TOKEN"

[mcp_servers.fs]
command = "npx"
args = ["-y", "fs"]
env = { ROOT = "/srv" }
enabled = false
tool_timeout_sec = 30
enabled_tools = ["read_file"]
"""


def test_install_writes_codexs_toml_keeping_its_comments_and_order_and_import_reads_it_in_hub_terms(home, tmp_path):
    import tomllib

    path = home / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CODEX)
    code, out, err = hermes("install", "codex", "--dry-run")
    assert code == 0 and path.read_text() == CODEX and "+[mcp_servers.hermes]" in out

    code, out, err = hermes("install", "codex")
    assert code == 0, err
    text = path.read_text()
    assert text.startswith(CODEX.rstrip("\n"))  # every line kept, comments too; the hub's table after them
    entry = tomllib.loads(text)["mcp_servers"]["hermes"]
    assert entry["args"][-4:] == ["serve", "--stdio", "--config", str(tmp_path / "hub.json")]
    assert entry["env"]["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert "env = {PATH = " in text or "env = { PATH = " in text  # an inline table, as Codex's docs write it
    assert hermes("install", "codex")[1].endswith("nothing changed\n") and path.read_text() == text

    code, out, err = hermes("import", "codex")
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["docs"] == {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
    assert servers["fs"] == {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "/srv"}, "disabled": True,
                             "timeout": 30, "tools": {"allow": ["read_file"]}}
    assert "skipped hermes: it runs a hermes hub" in out


def test_a_malformed_codex_config_is_a_clear_error_and_nothing_is_written(home):
    path = host_file(home, "codex", "[mcp_servers.x\ncommand = 1\n")
    code, _, err = hermes("install", "codex")
    assert code == 1 and "is not valid TOML" in err and "Nothing was written" in err
    assert path.read_text() == "[mcp_servers.x\ncommand = 1\n" and not backups(path)


ZED = """// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{
  "theme": "One Dark", // the one I like
  /* servers I run */
  "context_servers": {
    "fs": {
      "source": "custom",
      "command": "npx",
      "args": ["-y", "fs", "//not a comment"],
    }, // the files
    "old": {"command": {"path": "uvx", "args": ["old-server"], "env": {"K": "v"}}, "enabled": false},
  },
}
"""


def test_install_adds_the_hub_to_zeds_settings_keeping_its_comments_and_import_reads_zeds_servers(home, tmp_path):
    path = host_file(home, "zed", ZED)
    code, out, err = hermes("install", "zed")
    assert code == 0, err
    text = path.read_text()
    kept = [line for line in ZED.splitlines() if line.strip() not in ("},", "}")]
    assert all(line in text.splitlines() for line in kept), text  # every comment and line of the user's kept
    assert '"hermes": {' in text and text.index("// the files") < text.index('"hermes": {')
    assert hermes("install", "zed")[1].endswith("nothing changed\n") and path.read_text() == text

    code, out, err = hermes("import", "zed")
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["fs"] == {"command": "npx", "args": ["-y", "fs", "//not a comment"]}
    assert servers["old"] == {"command": "uvx", "args": ["old-server"], "env": {"K": "v"}, "disabled": True}
    assert "skipped hermes: it runs a hermes hub" in out


def test_a_change_to_zeds_settings_that_would_lose_its_comments_is_refused(home):
    path = host_file(home, "zed", '// mine\n{"context_servers": {"hermes": {"command": "npx", "args": ["other"]}}}\n')
    code, _, err = hermes("install", "zed")
    assert code == 1 and "already has a server 'hermes' that is not this hub" in err
    path.write_text('// mine\n{"context_servers": {"hermes": {"command": "hermes-hub", "args": ["serve"]}}}\n')
    code, _, err = hermes("install", "zed")
    assert code == 1 and "has comments, which a rewrite would lose" in err and "Nothing was written" in err
    assert path.read_text().startswith("// mine") and not backups(path)


def test_import_reads_copilots_servers_and_their_tools_lists(home, tmp_path):
    host_file(home, "copilot", json.dumps({"mcpServers": {
        "pw": {"type": "local", "command": "npx", "args": ["-y", "@playwright/mcp"], "tools": ["*"]},
        "docs": {"type": "http", "url": "https://mcp.example/mcp", "headers": {"K": "${K}"},
                 "tools": ["search", "read"]}}}))
    code, out, err = hermes("import", "copilot")
    assert code == 0, err
    servers = json.loads((tmp_path / "hub.json").read_text())["mcpServers"]
    assert servers["pw"] == {"command": "npx", "args": ["-y", "@playwright/mcp"]}
    assert servers["docs"] == {"type": "http", "url": "https://mcp.example/mcp", "headers": {"K": "${K}"},
                               "tools": {"allow": ["search", "read"]}}


ANA = "ana-token-0123456789abcdef0123"


@pytest.mark.slow
async def test_install_by_url_checks_the_token_with_the_hub_and_names_it_the_way_the_host_reads_it(
        home, tmp_path, monkeypatch):
    import tomllib

    served_config = {"mcpServers": {}, "auth": {"tokens": [{"token": ANA, "user": "ana"}]}}
    (tmp_path / "served").mkdir()
    async with serve_process(served_config, tmp_path / "served") as served:
        url = served.url
        code, _, err = hermes("install", "claude-code", "--url", url)
        assert code == 1 and "requires a token: pass --token-env VAR" in err
        monkeypatch.setenv("HUB_TOKEN", "not-the-token-0123456789abcdef")
        code, _, err = hermes("install", "claude-code", "--url", url, "--token-env", "HUB_TOKEN")
        assert code == 1 and "refused the token in $HUB_TOKEN (401)" in err
        assert not (home / ".claude.json").exists()  # nothing written either time

        monkeypatch.setenv("HUB_TOKEN", ANA)
        code, out, err = hermes("install", "claude-code", "--url", url, "--token-env", "HUB_TOKEN")
        assert code == 0, err
        entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["hermes"]
        assert entry == {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${HUB_TOKEN}"}}
        assert "set HUB_TOKEN to the hub's token" in out
        assert hermes("install", "claude-code", "--url", url, "--token-env", "HUB_TOKEN")[1].endswith(
            "nothing changed\n")
        # the header as the host expands it gets the token's user in
        bearer = entry["headers"]["Authorization"].replace("${HUB_TOKEN}", os.environ["HUB_TOKEN"])
        async with as_user(url, bearer.removeprefix("Bearer ")) as host:
            assert "hermes_memory_recall" in {t.name for t in (await host.list_tools()).tools}

        code, out, err = hermes("install", "codex", "--url", url, "--token", ANA)
        assert code == 0 and "now holds the hub's token; keep it private" in err
        codex = tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]["hermes"]
        assert codex == {"url": url, "http_headers": {"Authorization": f"Bearer {ANA}"}}
        code, out, err = hermes("install", "opencode", "--url", url, "--token-env", "HUB_TOKEN")
        opencode = json.loads((home / ".config/opencode/opencode.json").read_text())["mcp"]["hermes"]
        assert code == 0 and opencode["headers"] == {"Authorization": "Bearer {env:HUB_TOKEN}"}

    code, _, err = hermes("install", "claude-desktop", "--url", url)
    assert code == 1 and "Claude Desktop keeps no HTTP servers in its file" in err
    code, _, err = hermes("install", "zed", "--url", url, "--token-env", "HUB_TOKEN")
    assert code == 1 and "Zed reads no environment variables" in err
    code, _, err = hermes("install", "gemini", "--url", "not a url")
    assert code == 2 and "is not an http(s) URL" in err
