"""hub.json's model settings: ``agent`` (the model and the loop's defaults) and each profile of ``agents``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator

from hermes_hub.infra.config.intents import IntentConfig, RoutingConfig, intent_problems
from hermes_hub.infra.config.servers import ToolFilter, _Strict


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
    """Parts of the default instructions a profile replaces (``hermes_hub.core.agent.instructions``); unset: the default."""

    role: str | None = Field(None, max_length=20_000)  # who the model is and what it is for
    tools: str | None = Field(None, max_length=20_000)  # the words before the catalog's list of tools
    method: str | None = Field(None, max_length=20_000)  # how to work: plan, read each result, recover
    constraints: str | None = Field(None, max_length=20_000)  # schema, ask when unsure, never invent
    completion: str | None = Field(None, max_length=20_000)  # when the task counts as done


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
