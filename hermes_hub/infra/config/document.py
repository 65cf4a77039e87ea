"""Reading hub.json: ``${VAR}`` expansion, other hosts' keys dropped, and every problem named by its key path."""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hermes_hub.infra.config.intents import delegate_problems
from hermes_hub.infra.config.sections import (
    AgentSection,
    AnnotationsOverride,
    AuthSection,
    HubConfig,
    HubSection,
    MemorySection,
    ServerConfig,
    StorageSection,
    TokenEntry,
    ToolOverride,
    ToolsetConfig,
)
from hermes_hub.infra.errors import ConfigError, json_mistake

# Keys other MCP hosts write into server entries; pasted configs keep working, we ignore them.
FOREIGN_SERVER_KEYS = {"autoApprove", "alwaysAllow", "envFile", "transportType", "description", "icon"}
# Top-level keys of claude_desktop_config.json and friends that are not ours.
FOREIGN_TOP_KEYS = {"globalShortcut", "preferences", "inputs", "servers"}
_ENV_RE = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_config(path: str | os.PathLike[str], env: dict[str, str] | None = None) -> HubConfig:
    """Read, expand ``${VAR}`` and validate a hub.json; raise ConfigError naming each bad key."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([("", f"file not found: {p}. Create one (see README) or pass --config PATH")], str(p))
    except OSError as e:
        raise ConfigError([("", f"cannot read {p}: {e.strerror}")], str(p))
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError([("", f"not valid JSON at {json_mistake(e)}")], str(p))
    return parse_config(raw, base_dir=p.resolve().parent, env=env, source=str(p))


def parse_config(
    raw: Any, *, base_dir: Path | None = None, env: dict[str, str] | None = None, source: str = "hub.json"
) -> HubConfig:
    """Validate an already-parsed config document (see ``load_config``)."""
    if not isinstance(raw, dict):
        raise ConfigError([("", "the top level must be a JSON object with an 'mcpServers' key")], source)
    problems: list[tuple[str, str]] = []
    warnings: list[str] = []
    unset: list[tuple[str, str]] = []
    env = os.environ if env is None else env
    written, raw = raw, _expand(raw, env, "", unset)
    held = _hold_unset(unset, written, raw, env, problems, warnings)
    raw = _drop_foreign_keys(raw, warnings, problems)
    try:
        cfg = HubConfig.model_validate(raw)
    except ValidationError as e:
        problems += [(_key_path(err["loc"]), _message(err)) for err in e.errors()]
    else:
        problems += cfg.agent.problems() + cfg.toolset_problems() + delegate_problems(cfg.agents)
        for name in cfg.agents:
            problems += [(f"agents.{name}.{key.removeprefix('agent.')}", msg)
                         for key, msg in cfg.model_settings(name).problems()]
    if problems:
        raise ConfigError(problems, source)
    cfg.base_dir = base_dir or Path.cwd()
    cfg.warnings = warnings
    cfg.agent._base_dir = cfg.base_dir
    for name, server in cfg.mcp_servers.items():
        server._file = source
        server._unset = held.get(name, [])
    return cfg


def _hold_unset(unset: list[tuple[str, str]], written: dict[str, Any], raw: dict[str, Any], env: Any,
                problems: list[tuple[str, str]], warnings: list[str]) -> dict[str, list[str]]:
    """An unset ``${VAR}`` inside one ``mcpServers`` entry holds back that server alone (it stays in a
    config error naming the variable, and the others serve); anywhere else it is a problem of the file.
    The held entry keeps the ``${VAR}`` as written, so it still reads as the person wrote it."""
    held: dict[str, list[str]] = {}
    servers = raw.get("mcpServers") if isinstance(raw, dict) else None
    for path, message in unset:
        entries = servers if isinstance(servers, dict) else {}
        name = next((n for n, e in entries.items() if isinstance(e, dict) and path.startswith(f"mcpServers.{n}.")), None)
        if name is None:
            problems.append((path, message))
            continue
        held.setdefault(name, []).append(f"{path}: {message}")
    for name, messages in held.items():
        servers[name] = _expand(written["mcpServers"][name], env, f"mcpServers.{name}", None)
        warnings.append(f"mcpServers.{name}: held back, the other servers start: {messages[0]}"
                        + (f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""))
    return held


def _expand(value: Any, env: Any, path: str, problems: list[tuple[str, str]] | None) -> Any:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in every string; ``$${VAR}`` stays literal. An unset
    variable is a problem named by its key path, or (``problems`` None) stays as written."""
    if isinstance(value, dict):
        return {k: _expand(v, env, _join(path, k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, env, f"{path}[{i}]", problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def sub(m: re.Match[str]) -> str:
        escaped, name, default = m.groups()
        if escaped:
            return m.group(0)[1:]
        if name in env:
            return env[name]
        if default is not None:
            return default
        if problems is None:
            return m.group(0)
        problems.append((path, f"environment variable {name} is not set; export it or write ${{{name}:-default}}"))
        return ""

    return _ENV_RE.sub(sub, value)


def _drop_foreign_keys(raw: dict[str, Any], warnings: list[str], problems: list[tuple[str, str]]) -> dict[str, Any]:
    known_top = {"mcpServers", "hub", "storage", "auth", "memory", "agent", "agents", "toolsets", "artifacts", "guards",
                 "schedules", "docs"}
    out = {}
    for key, value in raw.items():
        if key in known_top:
            out[key] = value
        elif close := difflib.get_close_matches(key, sorted(known_top), n=1, cutoff=0.75):
            problems.append((key, f"unknown key; did you mean '{close[0]}'?"))
        else:
            if key not in FOREIGN_TOP_KEYS:
                warnings.append(f"{key}: not a hermes-hub key; ignored")
    servers = out.get("mcpServers")
    if isinstance(servers, dict):
        out["mcpServers"] = {
            name: {k: v for k, v in entry.items() if k not in FOREIGN_SERVER_KEYS} if isinstance(entry, dict) else entry
            for name, entry in servers.items()
        }
    return out


_SERVER_FIELDS = sorted(ServerConfig.model_fields)
_SECTION_FIELDS = {"hub": sorted(HubSection.model_fields), "storage": sorted(StorageSection.model_fields),
                   "auth": sorted(AuthSection.model_fields), "memory": sorted(MemorySection.model_fields),
                   "agent": sorted(AgentSection.model_fields)}


def _message(err: Any) -> str:
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        key = str(err["loc"][-1])
        fields = _SECTION_FIELDS.get(str(err["loc"][0]), _SERVER_FIELDS)
        if err["loc"][-2:-1] == ("tools",):
            fields = ["allow", "deny"]
        elif err["loc"][:1] == ("toolsets",):
            fields = sorted(ToolsetConfig.model_fields)
        elif err["loc"][:2] == ("auth", "tokens"):
            fields = sorted(TokenEntry.model_fields)
        elif err["loc"][:1] == ("mcpServers",) and err["loc"][2:3] == ("overrides",):
            fields = sorted((AnnotationsOverride if "annotations" in err["loc"][4:-1] else ToolOverride).model_fields)
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(fields)}"
        return f"unknown key; {hint}"
    if err["type"] == "missing":
        return "required key is missing"
    if "input" in err and err["type"] not in ("value_error", "assertion_error"):
        return f"{msg} (got {json.dumps(err['input'], ensure_ascii=False)[:80]})"
    return msg


def _key_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else _join(out, str(part))[len(out) :]
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
