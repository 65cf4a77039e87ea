"""hub.json's ``mcpServers`` entries: how to reach a server, what of it to serve, and whose credentials.

``ServerConfig`` is one entry; ``ToolFilter`` its allow/deny lists, ``ServerAuth`` its OAuth sign-in,
``ToolOverride`` what to serve instead of what the server says about a tool.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator

PREFIX_RE = re.compile(r"^[A-Za-z0-9_-]*$")
# ``${secret:NAME}`` in a per-user server's env or headers: the calling user's own secret (see ``hermes_hub.services.vault``)
SECRET_REF_RE = re.compile(r"\$\{secret:([^}]*)\}")
SECRET_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SECRET_KIND = "secret"  # the vault's kind for the values people set with `hermes-hub secret set`


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ToolFilter(_Strict):
    """Glob patterns over a server's own tool names. ``allow`` unset means every tool."""

    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)


class ServerAuth(_Strict):
    """``mcpServers.NAME.auth``: how the hub signs in to an OAuth-protected remote server. Every key is
    optional: with none set, discovery (RFC 9728, RFC 8414) and registration (CIMD or RFC 7591) do it all."""

    type: Literal["oauth"] = "oauth"
    client_id: str | None = None  # a client registered beforehand with the server's authorization server
    client_secret: SecretStr | None = None  # that client's secret, if it has one
    scopes: list[str] | None = None  # scopes to ask for; None: what the server advertises
    client_metadata_url: str | None = None  # an https URL of the hub's client ID metadata document (CIMD)

    @field_validator("client_metadata_url")
    @classmethod
    def _cimd_url(cls, v: str | None) -> str | None:
        if v is not None and (not v.startswith("https://") or v.rstrip("/").count("/") < 3):
            raise ValueError(f"client_metadata_url {v!r} must be an https URL with a path, e.g. "
                             "https://example.org/hermes-hub/client.json")
        return v


class AnnotationsOverride(_Strict):
    """``overrides.TOOL.annotations``: hints merged over what the server sends (the MCP spellings)."""

    title: str | None = Field(None, max_length=200)
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class ToolOverride(_Strict):
    """One entry of ``mcpServers.NAME.overrides``, keyed by the server's own tool name (see
    ``hermes_hub.core.aggregation.overrides``)."""

    title: str | None = Field(None, max_length=200)
    description: str | None = Field(None, max_length=16_000)  # replaces the server's
    description_append: str | None = Field(None, max_length=16_000)  # added after the server's, on a new line
    annotations: AnnotationsOverride | None = None

    @model_validator(mode="after")
    def _one_description(self) -> ToolOverride:
        if self.description is not None and self.description_append is not None:
            raise ValueError("give 'description' (replaces the server's) or 'description_append' (adds to it), "
                             "not both")
        return self


class ServerConfig(_Strict):
    """One entry of ``mcpServers``: a stdio child (``command``) or a remote (``url``)."""

    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    auth: ServerAuth | None = None  # OAuth settings; a remote server without them still signs in by discovery
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
    overrides: dict[str, ToolOverride] = Field(default_factory=dict)  # the server's tool name -> what to change
    # whose credentials (see docs/security.md): one connection per hub user, with that user's ${secret:NAME}s
    per_user: bool = False
    idle_stop: float = Field(600.0, gt=0)  # per_user: seconds without use before a user's connection stops
    max_children: int = Field(20, ge=1, le=10_000)  # per_user: users' connections at once (children, for stdio)
    _file: str = PrivateAttr("hub.json")  # the file this entry came from, for messages (see ``config_file``)
    _unset: list[str] = PrivateAttr(default_factory=list)  # its unset ${VAR}s, each "key path: what to do"

    @property
    def config_file(self) -> str:
        """The config file this entry was read from, as its messages name it ("hub.json" when not from a file)."""
        return self._file

    @property
    def held_back(self) -> str | None:
        """Why this entry cannot start as written (an unset ``${VAR}`` in it), or None. It alone stays in a
        config error until the variable is set and the hub reloads; the other servers serve."""
        if not self._unset:
            return None
        return (f"not started, a config error: {'; '.join(self._unset)} (then restart the hub, or reload it after "
                f"editing hub.json)")

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
        if self.auth is not None and self.command:
            raise ValueError("'auth' (OAuth) applies to a remote server ('url'); a stdio server takes its "
                             "credentials in 'env'")
        for key, values in (("env", self.env), ("headers", self.headers)):
            for var, value in values.items():
                for ref in SECRET_REF_RE.findall(value):
                    if not SECRET_NAME_RE.match(ref):
                        raise ValueError(f"{key}.{var}: ${{secret:{ref}}} is no secret name (letters, digits, "
                                         f"'_', '.' and '-', at most 64)")
                    if not self.per_user:
                        raise ValueError(f"{key}.{var} refers to ${{secret:{ref}}}, a user's own secret: add "
                                         f"\"per_user\": true to this server, so that each user's connection gets "
                                         f"their own (without it every user would act through one set of credentials)")
        if self.backoff_max < self.backoff_initial:
            raise ValueError(f"backoff_max ({self.backoff_max:g}) must be at least backoff_initial "
                             f"({self.backoff_initial:g})")
        return self

    @property
    def secret_names(self) -> list[str]:
        """The names of the ``${secret:NAME}`` references in ``env`` and ``headers``, in order, once each."""
        found = [ref for v in (*self.env.values(), *self.headers.values()) for ref in SECRET_REF_RE.findall(v)]
        return list(dict.fromkeys(found))

    def with_secrets(self, values: dict[str, str]) -> ServerConfig:
        """This entry with each ``${secret:NAME}`` replaced by ``values[NAME]``; one missing there leaves its
        env variable empty and its header out (``Bearer `` alone is no header an HTTP client sends)."""
        def fill(v: str) -> str:
            return SECRET_REF_RE.sub(lambda m: values.get(m.group(1), ""), v)

        def complete(v: str) -> bool:
            return all(ref in values for ref in SECRET_REF_RE.findall(v))
        copy = self.model_copy(update={"env": {k: fill(v) for k, v in self.env.items()},
                                       "headers": {k: fill(v) for k, v in self.headers.items() if complete(v)}})
        copy._file, copy._unset = self._file, self._unset
        return copy

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        if self.command:
            return "stdio"
        return "sse" if self.type == "sse" else "http"
