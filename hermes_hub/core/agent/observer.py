"""What an agent run tells the event bus and the tracer: its task, each context assembled, each model
request with its tokens, each plan of tool calls, and how it ended.

    observer = Observer(bus, run_id, "ana")
    with observer.running(profile.name, session_id, task):     # the invoke_agent span, RunFinished
        with observer.asking(1, model.name) as asked:          # a chat span, ModelRequestFinished
            asked.reply = await ask(...)

The run's tool calls are the pipeline's to tell (``pipeline/telemetry.py``): they pass it like a
host's. Nothing here waits: the bus drops what a slow subscriber cannot take.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_hub.infra.events import (Bus, ContextUpdated, ModelRequestFinished, RunFinished, TaskPlanGenerated,
                               UserMessageReceived)
from hermes_hub.infra.models import Reply
from hermes_hub.infra.telemetry import semconv as sc
from hermes_hub.infra.telemetry.tracing import span


class RunTotals(Protocol):  # what ``running`` reads of the run at its end (``loop.RunResult``)
    stop_reason: str
    rounds: int
    input_tokens: int
    output_tokens: int


@dataclass
class Asked:
    reply: Reply | None = None


class Observer:
    def __init__(self, bus: Bus | None, run_id: str, user_id: str) -> None:
        self.bus, self.run_id, self.user_id = bus, run_id, user_id

    def _publish(self, event_type: type, **fields: Any) -> None:
        if self.bus is not None:
            self.bus.publish(event_type(run_id=self.run_id, user_id=self.user_id, **fields))

    @contextmanager
    def running(self, profile: str, session_id: str, task: str, run: RunTotals) -> Iterator[None]:
        """The run's span around the block; ``task`` is already masked (what the run keeps)."""
        self._publish(UserMessageReceived, text=task[:500])
        started = time.perf_counter()
        attributes = {sc.GEN_AI_OPERATION_NAME: "invoke_agent", sc.GEN_AI_AGENT_NAME: profile,
                      sc.GEN_AI_CONVERSATION_ID: session_id, sc.HERMES_RUN_ID: self.run_id,
                      sc.HERMES_USER_ID: self.user_id}
        try:
            with span(f"invoke_agent {profile}", attributes) as current:
                try:
                    yield
                finally:
                    if current is not None:
                        current.set_attributes({sc.GEN_AI_USAGE_INPUT_TOKENS: run.input_tokens,
                                                sc.GEN_AI_USAGE_OUTPUT_TOKENS: run.output_tokens,
                                                "hermes.run.stop_reason": run.stop_reason})
        finally:
            self._publish(RunFinished, stop_reason=run.stop_reason, rounds=run.rounds,
                          input_tokens=run.input_tokens, output_tokens=run.output_tokens,
                          seconds=round(time.perf_counter() - started, 4))

    def context(self, what: str, tokens: int) -> None:
        self._publish(ContextUpdated, what=what, tokens=tokens)

    def planned(self, round_no: int, tools: list[str]) -> None:
        self._publish(TaskPlanGenerated, round=round_no, tools=tools)

    def replied(self, round_no: int, provider: str, reply: Reply) -> None:
        """A request made outside ``asking`` (an answer's continuation) and its tokens."""
        self._publish(ModelRequestFinished, round=round_no, model=provider.partition(":")[2] or provider,
                      input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens)

    @contextmanager
    def asking(self, round_no: int, provider: str) -> Iterator[Asked]:
        """One model request: set ``asked.reply`` in the block; an exception leaving it counts as an error."""
        vendor, _, model = provider.partition(":")
        asked = Asked()
        started = time.perf_counter()
        try:
            with span(f"chat {model or provider}", {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: vendor,
                                                    sc.GEN_AI_REQUEST_MODEL: model or provider}) as current:
                yield asked
                if current is not None and asked.reply is not None:
                    reply = asked.reply
                    current.set_attributes({sc.GEN_AI_RESPONSE_MODEL: reply.model,
                                            sc.GEN_AI_RESPONSE_FINISH_REASONS: [reply.stop_reason],
                                            sc.GEN_AI_USAGE_INPUT_TOKENS: reply.usage.input_tokens,
                                            sc.GEN_AI_USAGE_OUTPUT_TOKENS: reply.usage.output_tokens})
        finally:
            reply = asked.reply
            self._publish(ModelRequestFinished, round=round_no, model=model or provider,
                          input_tokens=reply.usage.input_tokens if reply else 0,
                          output_tokens=reply.usage.output_tokens if reply else 0,
                          seconds=round(time.perf_counter() - started, 4), error=reply is None)
