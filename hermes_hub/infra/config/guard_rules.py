"""``guards.mask`` and ``guards.limits``: what the masking and limits steps of the call pipeline do.

    "guards": {
      "mask": {"servers": ["crm"], "detectors": ["phone", "cn_id", "card", "email"],
               "patterns": {"order": "ORD-[0-9]{8}"}, "keep_hours": 24},
      "limits": [{"tools": ["crm_*"], "calls_per_minute": 30, "concurrent": 4},
                 {"users": ["*"], "tokens_per_day": 200000}]
    }
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from hermes_hub.infra.config.servers import _Strict

DETECTORS = ("phone", "cn_id", "card", "email", "ip", "api_key")  # hermes_hub.core.pipeline.detectors
_NAME = r"^[a-z][a-z0-9_]{0,31}$"
MAX_PATTERN_CHARS = 1000


class MaskSection(_Strict):
    """Masking of results at the exit: which calls (globs over servers and public tool names), what to find."""

    servers: list[str] = Field(default_factory=lambda: ["*"])
    tools: list[str] = Field(default_factory=lambda: ["*"])
    detectors: list[str] = Field(default_factory=lambda: list(DETECTORS))
    patterns: dict[str, str] = Field(default_factory=dict)  # placeholder name -> RE2 regular expression
    keep_hours: float = Field(default=24.0, gt=0, le=24 * 90)  # the sealed original, for an audited unmask

    @field_validator("detectors")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        if unknown := [d for d in value if d not in DETECTORS]:
            raise ValueError(f"unknown detector {', '.join(map(repr, unknown))}; the detectors are "
                             f"{', '.join(DETECTORS)} (a custom one goes in guards.mask.patterns)")
        return value

    @field_validator("patterns")
    @classmethod
    def _named(cls, value: dict[str, str]) -> dict[str, str]:
        import re

        for name, pattern in value.items():
            if not re.match(_NAME, name) or name in DETECTORS:
                raise ValueError(f"pattern name {name!r}: use 1-32 lower-case letters, digits or _, starting "
                                 f"with a letter, and not a detector's name; it names the placeholder ([{name}#1])")
            if not pattern or len(pattern) > MAX_PATTERN_CHARS:
                raise ValueError(f"pattern {name!r} must be 1 to {MAX_PATTERN_CHARS} characters")
            if why := _re2_problem(pattern):
                raise ValueError(f"pattern {name!r} is not a regular expression RE2 accepts ({why}); RE2 matches "
                                 "in linear time, so it has no look-arounds or back-references")
        return value


class LimitRule(_Strict):
    """One limit: the calls it counts (users, public tool names, servers: globs), and its bounds."""

    name: str | None = None  # how refusals name it; default limits[i]
    users: list[str] = Field(default_factory=lambda: ["*"])
    tools: list[str] = Field(default_factory=lambda: ["*"])
    servers: list[str] = Field(default_factory=lambda: ["*"])
    per_user: bool = True  # each user has their own count; false: one count for everyone the rule covers
    calls_per_minute: int | None = Field(default=None, ge=1)
    concurrent: int | None = Field(default=None, ge=1)
    tokens_per_day: int | None = Field(default=None, ge=1)  # the agent's model tokens (hermes_agent_run)
    http_429: bool = False  # a 2026-07-28 HTTP host's refused call: HTTP 429 + Retry-After, not a tool error

    @model_validator(mode="after")
    def _bounded(self) -> LimitRule:
        if self.calls_per_minute is None and self.concurrent is None and self.tokens_per_day is None:
            raise ValueError("a limit needs calls_per_minute, concurrent or tokens_per_day")
        return self


def _re2_problem(pattern: str) -> str | None:
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else "rejected"
        return why.decode(errors="replace") if isinstance(why, bytes) else str(why)
    return None
