"""The case format behind ``hermes-hub eval FILE``: a JSON file of cases, each a task (with optional
session history and memories to seed, and answers to the questions the run puts to the person) and
what must hold afterwards::

    {"profile": "office", "cases": [
      {"id": "remind-tomorrow-en", "task": "remind me tomorrow at ten to call Li",
       "expect": {"tools": [{"name": "reminders_send_reminder", "arguments": {"time": {"$regex": "T10:00"}}}],
                  "not_tools": ["calendar_create_event"], "contains": ["10:00"], "stop_reason": "answered",
                  "intents": ["remind"]}}]}

An argument matcher is a plain value (equal), or one of ``{"$regex": "..."}`` (searched in the value as
text), ``{"$contains": "..."}``, ``{"$present": true}``, ``{"$any_of": [...]}``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hermes_hub.infra.errors import HubError, json_mistake

MAX_FILE = 5_000_000  # bytes of a case file that are read
MATCHERS = ("$regex", "$contains", "$present", "$any_of")
CASE_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolExpect(_Strict):
    name: str = Field(min_length=1, max_length=200)  # a public tool name; * and ? match as in a glob
    arguments: dict[str, Any] = Field(default_factory=dict)  # argument -> matcher
    is_error: bool | None = None  # None: either

    @field_validator("arguments")
    @classmethod
    def _matchers(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key, m in v.items():
            if isinstance(m, dict) and any(k.startswith("$") for k in m):
                if len(m) != 1 or next(iter(m)) not in MATCHERS:
                    raise ValueError(f"argument {key!r}: a matcher is one of {', '.join(MATCHERS)}, e.g. "
                                     '{"$regex": "T10:00"}')
                if "$regex" in m:
                    try:
                        re.compile(str(m["$regex"]))
                    except re.error as e:
                        raise ValueError(f"argument {key!r}: $regex is not a valid regular expression ({e})")
        return v


class Expect(_Strict):
    tools: list[ToolExpect] = Field(default_factory=list)  # each must match one call, in this order
    not_tools: list[str] = Field(default_factory=list)  # globs no call may match
    contains: list[str] = Field(default_factory=list)  # the answer holds each (case-insensitive)
    not_contains: list[str] = Field(default_factory=list)
    stop_reason: str | None = None
    intents: list[str] | None = None  # the intents the run was routed to, in order
    asked: int | None = None  # questions the run put to the person
    differs_from: str | None = None  # an answer rated down: the new answer must not be it


class Message(_Strict):
    role: Literal["user", "assistant"]
    content: str = Field(max_length=20_000)


class Case(_Strict):
    id: str
    task: str = Field(min_length=1, max_length=20_000)
    profile: str | None = None  # default: the set's, else "default"
    history: list[Message] = Field(default_factory=list, max_length=200)  # seeded into the case's session
    memories: list[str] = Field(default_factory=list, max_length=50)  # remembered before, forgotten after
    answers: list[dict[str, Any]] = Field(default_factory=list, max_length=10)  # to the run's questions, in order
    expect: Expect = Field(default_factory=Expect)
    note: str | None = None  # why the case exists (a rating's comment)
    tags: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not CASE_ID_RE.fullmatch(v):
            raise ValueError(f"case id {v!r} must be 1-80 letters, digits or . _ : -")
        return v


class CaseSet(_Strict):
    description: str = ""
    profile: str | None = None
    cases: list[Case] = Field(min_length=1, max_length=2000)

    @model_validator(mode="after")
    def _unique(self) -> CaseSet:
        seen: set[str] = set()
        for c in self.cases:
            if c.id in seen:
                raise ValueError(f"case id {c.id!r} is used twice; give each case its own id")
            seen.add(c.id)
        return self


class CaseError(HubError):
    """A case file that cannot be read; the message names the file, the case and the key."""


def parse_cases(raw: Any, source: str) -> CaseSet:
    try:
        return CaseSet.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]) or "the file"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (see docs/evaluation.md for the case format)"
        raise CaseError(f"{source}: {where.lstrip('.')}: {msg}") from None


def load_cases(path: Path) -> CaseSet:
    """The cases of ``path``; a CaseError says what is wrong and where."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE + 1)
    except OSError as e:
        raise CaseError(f"cannot read the case file {path}: {e.strerror}; give the path of a JSON case file") from None
    if len(data) > MAX_FILE:
        raise CaseError(f"{path}: larger than {MAX_FILE:,} bytes; split the cases into several files")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f" at {json_mistake(e)}" if isinstance(e, json.JSONDecodeError) else ""
        raise CaseError(f"{path}: not valid JSON{where}") from None
    return parse_cases(raw, str(path))
