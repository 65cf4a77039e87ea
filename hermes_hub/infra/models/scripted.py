"""A model that answers from a JSON file of rules: deterministic, free, offline. For tests and the demo.

``agent.script`` names the file (relative to hub.json's folder). It holds a list of rules; each call
answers with the first rule whose ``when`` matches and that is not used up::

    [
      {"when": "weather in (\\\\w+)", "tool_calls": [{"name": "weather_get", "arguments": {"city": "Paris"}}]},
      {"when": "sunny", "text": "It is sunny in Paris.", "times": 1},
      {"when": "remember", "json": {"memories": [{"text": "likes tea", "kind": "preference"}]}},
      {"text": "I don't know."}
    ]

- ``when``: a regular expression (Python syntax, case-sensitive; write ``(?i)`` for any case) searched in
  the newest user or tool messages, those after the model's last turn. No ``when``: always matches.
- ``task``: a regular expression searched in the request's last user message (an agent run's task, also
  in the rounds after its tool results); both ``when`` and ``task`` must match when both are given.
- ``text``: the answer. ``json``: an answer written as JSON rather than as a string holding JSON.
- ``tool_calls``: ``[{"name": ..., "arguments": {...}}]``, the tools the model calls; their ids are
  ``call_<n>_<i>`` (the n-th request, the i-th call in it), the same on every run.
- ``times``: how many calls the rule may answer; unset, any number.
- ``reasoning``: text returned as the model's reasoning beside the answer (as thinking models do).

A text longer than the request's ``max_tokens`` (at four characters a token) is cut there and the
reply's stop reason is ``max_tokens``, as a vendor's would be; ``temperature`` and ``top_p`` change
nothing (a script is deterministic).

A rule needs ``text``, ``json`` or ``tool_calls``. When no rule matches, the call fails with an error
naming the file and the text that was searched.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from hermes_hub.infra.errors import ConfigError, json_mistake
from hermes_hub.infra.models.base import Message, ProviderError, Reply, ToolCall, ToolSpec, Usage

log = logging.getLogger(__name__)


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    when: str | None = None
    task: str | None = None  # searched in the last user message (a run's task), whatever came after it
    text: str | None = None
    json_: Any = Field(None, alias="json")
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    times: int | None = Field(None, ge=1)
    reasoning: str | None = None  # returned as the model's reasoning text beside the answer

    @field_validator("when", "task")
    @classmethod
    def _regex(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"'{info.field_name}' is not a valid regular expression ({e})")
        return v

    @model_validator(mode="after")
    def _answers(self) -> Rule:
        if self.text is None and self.json_ is None and not self.tool_calls:
            raise ValueError("a rule needs 'text', 'json' or 'tool_calls'")
        if self.text is not None and self.json_ is not None:
            raise ValueError("give either 'text' or 'json', not both")
        return self

    def answer(self) -> str:
        if self.json_ is not None:
            return json.dumps(self.json_, ensure_ascii=False)
        return self.text or ""


def load_script(path: Path) -> list[Rule]:
    """The rules in ``path``; a ConfigError at ``agent.script`` says what is wrong with the file and where."""

    def bad(msg: str) -> ConfigError:
        return ConfigError([("agent.script", f"{path}: {msg}")])

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise bad("file not found (a relative agent.script is relative to hub.json's folder); create it or fix "
                  "the path")
    except OSError as e:
        raise bad(f"cannot read it: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f" at {json_mistake(e)}" if isinstance(e, json.JSONDecodeError) else ""
        raise bad(f"not valid JSON{where}")
    if not isinstance(raw, list):
        raise bad('the file must hold a JSON list of rules, e.g. [{"when": "hello", "text": "Hi!"}]')
    rules = []
    for i, item in enumerate(raw):
        try:
            rules.append(Rule.model_validate(item))
        except ValidationError as e:
            err = e.errors()[0]
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key; rules know when, text, json, task, tool_calls, times, reasoning; tool calls know name, arguments"
            raise bad(f"rule [{i}]{where}: {msg}")
    return rules


class ScriptedProvider:
    """Answers each ``complete`` with the first matching rule of ``script`` that is not used up."""

    def __init__(self, script: Path, label: str | None = None) -> None:
        self.path = script
        self.name = f"scripted:{label or script.name}"
        self._rules = load_script(script)
        self._left = [r.times for r in self._rules]  # None: unlimited
        self._requests = 0

    async def aclose(self) -> None:
        """Nothing to release: the rules were read at construction."""

    async def __aenter__(self) -> ScriptedProvider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<ScriptedProvider {self.name}>"

    async def complete(self, messages: list[Message], *, system: str | None = None, tools: Sequence[ToolSpec] = (),
                       max_tokens: int = 1024, json_output: bool = False, temperature: float | None = None,
                       top_p: float | None = None) -> Reply:
        self._requests += 1
        searched = _newest_input(messages)
        asked = next((m.content for m in reversed(messages) if m.role == "user"), "")
        for i, rule in enumerate(self._rules):
            if self._left[i] == 0 or (rule.when is not None and not re.search(rule.when, searched)):
                continue
            if rule.task is not None and not re.search(rule.task, asked):
                continue
            if self._left[i] is not None:
                self._left[i] -= 1
            calls = tuple(ToolCall(f"call_{self._requests}_{j}", c.name, dict(c.arguments))
                          for j, c in enumerate(rule.tool_calls, start=1))
            text, stop = rule.answer(), "tool_use" if calls else "end"
            if len(text) > max_tokens * 4:  # its own terms: four characters a token, as it counts usage
                text, stop = text[:max_tokens * 4], "max_tokens"
            read = sum(len(m.content) for m in messages) + len(system or "")
            log.debug("%s: request %d answered by rule [%d] (temperature %s: a script is deterministic)", self.name,
                      self._requests, i, temperature)
            return Reply(text, calls, stop,
                         Usage(input_tokens=read // 4, output_tokens=len(text) // 4), "scripted",
                         reasoning=rule.reasoning or "")
        used_up = sum(1 for n in self._left if n == 0)
        raise ProviderError(
            f"scripted model {self.path}: no rule matches {_preview(searched)}"
            + (f" ({used_up} rule{'s' * (used_up != 1)} used up)" if used_up else "")
            + "; add a rule whose 'when' matches it, or one without 'when'")


def _newest_input(messages: list[Message]) -> str:
    """The user or tool messages after the model's last turn, the text a rule's ``when`` is searched in."""
    newest: list[str] = []
    for m in reversed(messages):
        if m.role == "assistant":
            break
        newest.append(m.content)
    return "\n".join(reversed(newest))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 120 else flat[:117] + "...") if flat else "an empty message"
