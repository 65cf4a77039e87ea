"""The keys of an agent profile that put a router above its tool loop (issue 21): ``intents`` with their
slots, and ``routing``, what happens when the route is unsure or a required slot is missing."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from hermes_hub.infra.config.servers import _Strict

INTENT_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
SLOT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


class IntentConfig(_Strict):
    """One intent a request may be routed to: what it is for, the slots it needs, the tools it may use."""

    name: str
    description: str = Field(min_length=1, max_length=1000)
    required: list[str] = Field(default_factory=list, max_length=20)  # slots the run cannot go on without
    optional: list[str] = Field(default_factory=list, max_length=20)
    tools: list[str] = Field(default_factory=list, max_length=50)  # public tool name globs
    fallback_tool: str | None = None  # offered in any case, and named to the model as the one to try first

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not INTENT_NAME_RE.fullmatch(v):
            raise ValueError(f"intent name {v!r} must be 1-40 letters, digits, '_' or '-', e.g. 'schedule'")
        return v

    @field_validator("required", "optional")
    @classmethod
    def _slots(cls, v: list[str]) -> list[str]:
        for slot in v:
            if not SLOT_RE.fullmatch(slot):
                raise ValueError(f"slot name {slot!r} must be an identifier, e.g. 'date' or 'start_time'")
        return v

    @model_validator(mode="after")
    def _distinct(self) -> IntentConfig:
        both = set(self.required) & set(self.optional)
        if both:
            raise ValueError(f"slot {sorted(both)[0]!r} is both required and optional; keep it in one list")
        return self


class RoutingConfig(_Strict):
    """Below ``confidence_threshold``, or with a required slot missing: ``ask`` the person through the host
    (the run ends with ``needs_input`` and the question when the host cannot ask), ``stop`` with the question,
    or go on with the ``best`` guess."""

    confidence_threshold: float = Field(0.6, ge=0, le=1)
    fallback: Literal["ask", "stop", "best"] = "ask"


def delegate_problems(agents: dict[str, Any]) -> list[tuple[str, str]]:
    """Delegates that name no profile, or the profile itself."""
    known = {"default", *agents}
    out = []
    for name, profile in agents.items():
        for i, other in enumerate(profile.delegates):
            if other not in known:
                out.append((f"agents.{name}.delegates[{i}]", f"no agent profile {other!r}; the profiles are: "
                                                              f"{', '.join(sorted(known))}"))
            elif other == name:
                out.append((f"agents.{name}.delegates[{i}]", "a profile cannot delegate to itself"))
    return out


def intent_problems(intents: list[IntentConfig]) -> list[str]:
    """Two intents with one name."""
    seen: set[str] = set()
    out = []
    for intent in intents:
        if intent.name in seen:
            out.append(f"intent {intent.name!r} is declared twice; give each intent its own name")
        seen.add(intent.name)
    return out
