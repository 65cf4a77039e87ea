"""The MCP hosts people use, their config files, and the hub's entry in them.

    host = HOSTS["claude-desktop"]
    path = host.path()                                  # per OS; HERMES_CLAUDE_DESKTOP_CONFIG overrides
    doc, text = read_json_file(path, host.label)        # HostFileError if it is not a JSON object
    entry = host.entry(Path("hub.json"))
    write_with_backup(path, jsonfile.render(text, doc, with_entry(doc, host.key, "hermes", entry), host.key))

Claude Desktop, Cursor, Claude Code, Gemini CLI, Qwen Code, Windsurf and Copilot CLI keep servers under
``mcpServers`` (Copilot's with ``"tools": ["*"]``); VS Code's ``mcp.json`` keeps them under ``servers``, each
with ``"type": "stdio"``; opencode's under ``mcp``, each ``"type": "local"`` with its command as one array
(``Host.entry``); Zed's settings.json, JSON with comments, under ``context_servers``; Codex's
``config.toml`` under ``[mcp_servers.NAME]`` (``tomlfile``). ``Host.remote`` is the entry of a served hub
by URL, its token in an ``Authorization`` header (an environment variable as the host's file names one). Writes keep every other key and server, copy the
old file to ``<file>.<time>.bak`` first and replace it in one step, in the file's own style
(``jsonfile``: a diff shows only the hub's entry); bad files are never written.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_hub.app.cli.jsonfile import blanked
from hermes_hub.infra.errors import HubError, json_mistake


class HostFileError(HubError):
    """A host's config file cannot be read or changed safely; nothing was written."""


@dataclass(frozen=True)
class Remote:
    """How a host's file names a streamable HTTP server."""

    url_key: str = "url"
    type: str | None = None  # the entry's "type": "http" (Claude Code, VS Code, Copilot), opencode's "remote"
    env_ref: str | None = "${%s}"  # an environment variable in a header value; None: the host reads none


@dataclass(frozen=True)
class Host:
    name: str  # as typed on the command line
    label: str
    key: str  # where its servers are: "mcpServers" or "servers"
    typed: bool  # entries carry "type": "stdio"
    where: dict[str, str]  # platform ("darwin", "win32", "linux") -> path; ~, %APPDATA% and $XDG_CONFIG_HOME expand
    local: bool = False  # opencode's shape: "type": "local", the command as one array, "environment"
    toml: bool = False  # Codex: config.toml, [mcp_servers.NAME] (``tomlfile``)
    remote: Remote | None = Remote()  # None: the host's file holds no HTTP servers
    comments: bool = False  # JSON with comments (Zed): entries are added, the comments kept
    extra: tuple[tuple[str, Any], ...] = ()  # keys every entry of this host has, e.g. Copilot's "tools": ["*"]

    def entry(self, config: Path) -> dict[str, Any]:
        """The hub's stdio entry as this host writes its servers."""
        entry = hub_entry(config, typed=self.typed)
        if self.local:
            entry = {"type": "local", "command": [entry["command"], *entry["args"]], "environment": entry["env"],
                     "enabled": True}
        return {**entry, **dict(self.extra)}

    def remote_entry(self, url: str, token_env: str | None = None, token: str | None = None) -> dict[str, Any]:
        """The entry of the hub served at ``url``: its token named by ``token_env`` (how this host's file
        names an environment variable) or written as ``token``; neither where the hub needs none."""
        if self.remote is None:
            raise HostFileError(f"{self.label} keeps no HTTP servers in its file (add the hub by URL in its "
                                f"settings), or install the stdio entry: drop --url")
        if token_env is not None and self.remote.env_ref is None:
            raise HostFileError(f"{self.label} reads no environment variables in its server entries: pass the "
                                f"token itself with --token (the file then holds it), or install the stdio entry")
        if self.toml:
            entry: dict[str, Any] = {"url": url}
            if token_env is not None:
                entry["bearer_token_env_var"] = token_env
            elif token is not None:
                entry["http_headers"] = {"Authorization": f"Bearer {token}"}
            return entry
        entry = {"type": self.remote.type} if self.remote.type else {}
        entry[self.remote.url_key] = url
        bearer = (self.remote.env_ref % token_env) if token_env is not None and self.remote.env_ref else token
        if bearer is not None:
            entry["headers"] = {"Authorization": f"Bearer {bearer}"}
        if self.local:
            entry["enabled"] = True
        return {**entry, **dict(self.extra)}

    @property
    def env_var(self) -> str:
        return f"HERMES_{self.name.upper().replace('-', '_')}_CONFIG"

    def path(self, env: Any = None, platform: str | None = None) -> Path:
        """The host's config file on this OS, unless ``HERMES_<HOST>_CONFIG`` names another."""
        env = os.environ if env is None else env
        if env.get(self.env_var):
            return Path(env[self.env_var]).expanduser()
        platform = platform or sys.platform
        raw = self.where.get(platform) or self.where["linux"]
        home = Path(env.get("HOME") or Path.home())
        raw = raw.replace("%APPDATA%", env.get("APPDATA") or str(home / "AppData" / "Roaming"))
        raw = raw.replace("$XDG_CONFIG_HOME", env.get("XDG_CONFIG_HOME") or str(home / ".config"))
        return Path(raw.replace("~", str(home), 1) if raw.startswith("~") else raw)


HOSTS = {h.name: h for h in (
    Host("claude-desktop", "Claude Desktop", "mcpServers", False, {
        "darwin": "~/Library/Application Support/Claude/claude_desktop_config.json",
        "win32": "%APPDATA%/Claude/claude_desktop_config.json",
        "linux": "$XDG_CONFIG_HOME/Claude/claude_desktop_config.json"}, remote=None),
    Host("cursor", "Cursor", "mcpServers", False, {"linux": "~/.cursor/mcp.json"}, remote=Remote(env_ref="${env:%s}")),
    Host("vscode", "VS Code", "servers", True, {
        "darwin": "~/Library/Application Support/Code/User/mcp.json",
        "win32": "%APPDATA%/Code/User/mcp.json",
        "linux": "$XDG_CONFIG_HOME/Code/User/mcp.json"}, remote=Remote(type="http", env_ref="${env:%s}")),
    Host("claude-code", "Claude Code", "mcpServers", True, {"linux": "~/.claude.json"}, remote=Remote(type="http")),
    Host("gemini", "Gemini CLI", "mcpServers", False, {"linux": "~/.gemini/settings.json"}, remote=Remote("httpUrl")),
    Host("qwen", "Qwen Code", "mcpServers", False, {"linux": "~/.qwen/settings.json"}, remote=Remote("httpUrl")),
    Host("windsurf", "Windsurf", "mcpServers", False, {"linux": "~/.codeium/windsurf/mcp_config.json"},
         remote=Remote("serverUrl", env_ref="${env:%s}")),
    Host("opencode", "opencode", "mcp", False, {"linux": "$XDG_CONFIG_HOME/opencode/opencode.json"}, local=True,
         remote=Remote(type="remote", env_ref="{env:%s}")),
    Host("codex", "Codex", "mcp_servers", False, {"linux": "~/.codex/config.toml"}, toml=True),
    Host("copilot", "Copilot CLI", "mcpServers", True, {"linux": "~/.copilot/mcp-config.json"},
         remote=Remote(type="http"), extra=(("tools", ["*"]),)),
    Host("zed", "Zed", "context_servers", False, {"linux": "$XDG_CONFIG_HOME/zed/settings.json"},
         remote=Remote(env_ref=None), comments=True),
)}
# Where hosts other than hub.json keep a streamable HTTP server's address: Gemini CLI and Qwen Code write
# ``httpUrl`` (their ``url`` is SSE, as hub.json's is with ``"type": "sse"``), Windsurf ``serverUrl``.
URL_KEYS = ("httpUrl", "serverUrl")


def read_json_object(path: Path, what: str, comments: bool = False) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when the file does not exist (or is empty)."""
    return read_json_file(path, what, comments)[0]


def read_json_file(path: Path, what: str, comments: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object in ``path`` (None when the file does not exist or is empty) and the file's text;
    with ``comments``, JSON with comments and trailing commas (Zed's settings.json)."""
    try:
        text = path.read_bytes().decode("utf-8")  # not read_text: it would turn CRLF line endings into LF
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as e:
        raise HostFileError(f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}; nothing was written")
    if not text.strip() or (comments and not blanked(text).strip()):
        return None, text
    try:
        doc = json.loads(blanked(text) if comments else text)
    except json.JSONDecodeError as e:
        kept = "" if comments else " (comments are not kept: remove them)"
        raise HostFileError(
            f"{what} {path} is not valid JSON ({json_mistake(e)}); fix it{kept} "
            f"or move the file away, then run this again. Nothing was written.")
    if not isinstance(doc, dict):
        raise HostFileError(f"{what} {path} must hold a JSON object ({{...}}) at the top; nothing was written")
    return doc, text


def servers_of(doc: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    servers = doc.get(key, {})
    if not isinstance(servers, dict):
        raise HostFileError(f"'{key}' in {path} must be a JSON object of servers by name (it is a "
                            f"{type(servers).__name__}); fix it, then run this again. Nothing was written.")
    return servers


def hub_command() -> list[str]:
    """How a host starts this installation's hub: its ``hermes-hub`` script, else this Python with ``-m``."""
    script = Path(sys.executable).parent / ("hermes-hub.exe" if sys.platform == "win32" else "hermes-hub")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes_hub"]


# What a host's servers find on PATH besides this installation's bin: the system's standard folders (and
# Homebrew's on macOS), never the PATH of whoever ran `install`, which is theirs and would be copied for good.
STANDARD_PATH = {"darwin": ["/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin"],
                 "win32": [r"C:\Windows\System32", r"C:\Windows"],
                 "linux": ["/usr/local/bin", "/usr/bin", "/bin"]}


def hub_entry(config: Path, *, typed: bool, platform: str | None = None) -> dict[str, Any]:
    """The stdio entry that runs the hub of ``config``. Hosts start servers with a bare PATH; the entry's is
    this Python's folder (the venv's bin) then the standard folders, as the README's example shows."""
    command, *prefix = hub_command()
    platform = platform or sys.platform
    folders = [str(Path(sys.executable).parent), *STANDARD_PATH.get(platform, STANDARD_PATH["linux"])]
    separator = ";" if platform == "win32" else ":"
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    entry.update(command=command, args=[*prefix, "serve", "--stdio", "--config", str(config.resolve())],
                 env={"PATH": separator.join(dict.fromkeys(folders))})
    return entry


def runs_a_hub(entry: Any) -> bool:
    """Does this host entry start a hermes hub (any config)?"""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command", "")
    words = [str(w) for w in (command if isinstance(command, list) else [command])]
    words += [str(a) for a in entry.get("args") or []]
    names = {Path(w).name.removesuffix(".exe") for w in words}
    return ("hermes-hub" in names or "hermes_hub" in words) and "serve" in words


def diff(old_text: str | None, new_text: str, path: Path) -> str:
    before = (old_text or "").splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, new_text.splitlines(keepends=True), f"{path} (now)",
                                        f"{path} (after)"))


def write_with_backup(path: Path, text: str) -> Path | None:
    """Copy ``path`` to ``<path>.<time>.bak`` (when it exists), then replace it atomically; the backup."""
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(f"{path.name}.{datetime.now():%Y%m%d-%H%M%S-%f}.bak")
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.hermes-tmp")
    tmp.write_bytes(text.encode("utf-8"))  # bytes: the file's own line endings, untranslated
    if path.exists():
        shutil.copymode(path, tmp)  # e.g. ~/.claude.json is private: keep it so
    os.replace(tmp, path)
    return backup


def with_entry(doc: dict[str, Any] | None, key: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(doc or {})
    new.setdefault(key, {})[name] = entry
    return new


def in_hub_terms(entry: Any) -> Any:
    """A host's server entry as hub.json writes it: ``httpUrl``/``serverUrl`` become ``url``; opencode's
    ``"type": "local"`` with a command array becomes ``command`` and ``args``, its ``environment`` ``env``,
    its ``"type": "remote"`` a plain ``url``, and ``"enabled": false`` ``"disabled": true``."""
    if not isinstance(entry, dict):
        return entry
    entry = _zed_or_copilot(entry)
    if entry.get("type") in ("local", "remote"):
        off = entry.get("enabled") is False
        entry = {k: v for k, v in entry.items() if k not in ("type", "enabled")} | ({"disabled": True} if off else {})
        if isinstance(entry.get("command"), list) and entry["command"]:
            first, *rest = entry.pop("command")
            entry = {"command": first, **({"args": rest} if rest else {}), **entry}
        if "environment" in entry:
            entry["env"] = entry.pop("environment")
    if "url" in entry:
        return entry
    for key in URL_KEYS:
        if key in entry:
            return {("url" if k == key else k): v for k, v in entry.items()}
    return entry


def _zed_or_copilot(entry: dict[str, Any]) -> dict[str, Any]:
    """Zed's ``source``, ``enabled`` and older ``"command": {"path", "args", "env"}``, and Copilot's
    ``"tools"`` list (``["*"]`` is every tool), in hub.json's terms."""
    entry = dict(entry)
    if entry.get("source") == "custom":
        del entry["source"]
    command = entry.get("command")
    if isinstance(command, dict) and isinstance(command.get("path"), str):
        entry["command"] = command["path"]
        entry.update({k: command[k] for k in ("args", "env") if k in command})
    if "enabled" in entry and entry.get("type") not in ("local", "remote"):
        if entry.pop("enabled") is False:
            entry["disabled"] = True
    tools = entry.get("tools")
    if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
        if "*" in tools:
            del entry["tools"]
        else:
            entry["tools"] = {"allow": tools}
    return entry


class _AnyVar(dict):  # type: ignore[type-arg]
    """Every ${VAR} is set: an imported entry is checked for its shape, not for this shell's environment."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return "x"


@dataclass
class Imported:
    doc: dict[str, Any]  # hub.json after the import
    added: list[str]
    skipped: list[tuple[str, str]]  # (name, why)
    clashes: list[tuple[str, str]]


def import_servers(hub_doc: dict[str, Any] | None, servers: dict[str, Any], source: str) -> Imported:
    """Add each of a host's ``servers`` to hub.json's ``mcpServers``, as written (``${VAR}`` stays a reference).
    An entry that runs a hermes hub is skipped; one whose name hub.json already has is reported, never overwritten."""
    from hermes_hub.infra.config import parse_config
    from hermes_hub.infra.errors import ConfigError

    doc = copy.deepcopy(hub_doc) if hub_doc is not None else {"mcpServers": {}}
    mine = servers_of(doc, "mcpServers", Path("hub.json"))
    doc["mcpServers"] = mine
    out = Imported(doc, [], [], [])
    for name, entry in servers.items():
        if runs_a_hub(entry):
            out.skipped.append((name, "it runs a hermes hub (install the hub itself with `hermes-hub install`)"))
        elif name in mine:
            if mine[name] != entry:
                out.clashes.append((name, f"hub.json already has a different server '{name}'; rename one of them in "
                                          f"{source} or hub.json, then import again"))
            else:
                out.skipped.append((name, "already in hub.json"))
        elif "${input:" in json.dumps(entry):
            out.skipped.append((name, "uses VS Code's ${input:...} prompts: put the value in an environment "
                                      "variable and write ${VAR} instead"))
        else:
            entry = in_hub_terms(entry)
            try:
                parse_config({"mcpServers": {name: entry}}, env=_AnyVar(), source=source)
            except ConfigError as e:
                out.skipped.append((name, "; ".join(f"{k}: {m}" if k else m for k, m in e.problems)))
            else:
                mine[name] = copy.deepcopy(entry)
                out.added.append(name)
    return out
