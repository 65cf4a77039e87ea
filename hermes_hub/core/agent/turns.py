"""One run's state and one round's steps: what the run keeps (``RunResult``), what it sends the model
(``Request``), one traced model request (``ask_round``) and a turn's tool results taken in (``take_results``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hermes_hub.core.agent.calls import CallRecord, Calls
from hermes_hub.core.agent.completion import ask
from hermes_hub.core.agent.context import tokens
from hermes_hub.core.agent.observer import Observer
from hermes_hub.core.agent.planning import Planner
from hermes_hub.core.agent.profiles import Profile
from hermes_hub.core.agent.prompts import PromptLog
from hermes_hub.core.aggregation.catalog import ORIGIN_META
from hermes_hub.infra.masking import Masker
from hermes_hub.infra.models import Message, Provider, ProviderError, ToolSpec


@dataclass
class RunResult:
    answer: str
    session_id: str
    run_id: str
    stop_reason: str
    rounds: int = 0
    tool_calls: list[CallRecord] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    trace: list[dict[str, Any]] = field(default_factory=list)  # every budget decision, model request, tool call
    invalid: dict[str, int] = field(default_factory=dict)  # tool -> invalid-argument calls in a row
    intents: list[str] | None = None  # issue 21: the intents the run was routed to, in order (None: no router)
    started: float = field(default_factory=time.perf_counter)

    def event(self, kind: str, **fields: Any) -> None:
        self.trace.append({"at": round(time.perf_counter() - self.started, 4), "kind": kind, **fields})

    def count(self, usage: tuple[int, int]) -> None:
        self.input_tokens, self.output_tokens = self.input_tokens + usage[0], self.output_tokens + usage[1]

    def structured(self) -> dict[str, Any]:
        return {"answer": self.answer, "session_id": self.session_id, "run_id": self.run_id,
                "stop_reason": self.stop_reason, "rounds": self.rounds,
                "tool_calls": [{"name": c.name, "arguments": c.arguments, "is_error": c.is_error,
                                "seconds": round(c.seconds, 3)} for c in self.tool_calls],
                "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
                **({"intents": self.intents} if self.intents is not None else {})}


@dataclass
class Request:
    """What a run sends the model, grown round by round: the system text (the plan's facts after ``base``),
    the messages, the tools offered and what their calls go through, and the request's estimated size."""

    system: str
    base: str
    planner: Planner | None
    messages: list[Message]
    specs: list[ToolSpec]
    by_name: dict[str, Any]
    reader: Any
    calls: Calls
    estimate: int


async def ask_round(model: Provider, req: Request, profile: Profile, run: RunResult, round_no: int,
               prompts: PromptLog, observer: Observer, masker: Masker) -> Any:
    """One model request of the run, traced; None when the model failed (the run ends with model_error)."""
    prompt = prompts.request(req.system, req.messages, req.specs)  # at request time: also a request that fails
    asked = time.perf_counter()
    try:
        with observer.asking(round_no, model.name) as request:
            reply = request.reply = await ask(model, req.messages, req.system, req.specs, profile)
    except ProviderError as e:
        error = masker.text(str(e))  # a provider's message may quote what it was sent
        run.event("request", round=round_no, provider=model.name, error=error, messages=len(req.messages),
                  estimated_tokens=req.estimate, seconds=round(time.perf_counter() - asked, 4), prompt=prompt)
        run.stop_reason, run.answer = "model_error", f"The model could not answer: {error}"
        return None
    run.event("request", round=round_no, provider=model.name, model=reply.model, messages=len(req.messages),
              estimated_tokens=req.estimate,
              input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
              seconds=round(time.perf_counter() - asked, 4), finish=reply.stop_reason,
              tool_calls=len(reply.tool_calls), prompt=prompt, response=prompts.response(reply))
    run.input_tokens += reply.usage.input_tokens
    run.output_tokens += reply.usage.output_tokens
    return reply


def take_results(req: Request, run: RunResult, round_no: int, asked: list[Any], outcomes: list[Any],
                  transcript: list[dict[str, Any]], results: list[str]) -> tuple[bool, bool]:
    """A turn's tool results into the request, the trace and the transcript: (any declined, stop now)."""
    reader, declined = req.reader, False
    if reader is not None and reader.name not in req.by_name and any(d.artifact_id for d in outcomes):
        req.by_name[reader.name] = reader  # a cut result names it: from now on it is offered
        req.specs.append(ToolSpec(reader.name, reader.description or "", reader.input_schema))
    for call, done in zip(asked, outcomes):
        text, is_error = done.text, done.is_error
        refused = done.outcome == "declined"
        declined = declined or refused
        run.tool_calls.append(done.record)
        origin = (req.by_name[call.name].meta or {}).get(ORIGIN_META, {}) if call.name in req.by_name else {}
        run.event("tool", round=round_no, name=call.name, server=origin.get("server"),
                  arguments=done.record.arguments,  # masked in calls.py
                  started=done.started, seconds=round(done.record.seconds, 4),
                  outcome="declined" if refused else "error" if is_error else "ok", result_chars=len(text),
                  **({"artifact_id": done.artifact_id} if done.artifact_id else {}))
        req.messages.append(Message("tool", text, tool_call_id=call.id, is_error=is_error))
        req.estimate += tokens(text)
        transcript.append({"role": "tool", "content": text, "tool_call_id": call.id,
                           **({"metadata": {"artifact_id": done.artifact_id}} if done.artifact_id else {})})
        results.append(text)
        if done.outcome == "needs_input":
            run.stop_reason, run.answer = "needs_input", text
            return declined, True
    return declined, False
