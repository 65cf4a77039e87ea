"""The hub's event bus: typed events of calls and agent runs, in process, for whoever listens.

    bus = Bus()
    with bus.subscribe("metrics") as events:      # a bounded queue of its own
        bus.publish(ToolCallRequested(run_id, "ana", call_id="c1", tool="notes_add", server="notes"))
        event = await events.receive()
    bus.stream(run_id)                            # the run's recent events, oldest first

The call pipeline (``pipeline/telemetry.py``) publishes the tool events, the agent loop the rest.
``publish`` never waits: each subscriber has its own bounded queue, and an event that does not fit
is dropped for that subscriber and counted (``dropped``, shown in /metrics), so a slow subscriber
never slows a call. Every event carries the run (task) it belongs to (``None`` for a host's own
call), its caller, and a sequence number that increases across the hub; the last events of the most
recent runs are kept so that a run's whole stream can be pulled by its id. Events carry names,
outcomes, timings and token counts, never arguments or results (what a tool returns stays in the
audit, masked). Their free text (``FREE_TEXT``: a task's words) is masked once more as it is published
(``hermes_hub.infra.masking``: credentials, the hub's own tokens, the configured patterns and detectors), so
no follower of ``/events`` reads a secret whoever published the event.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hermes_hub.infra.masking import MASKER, Masker

QUEUE = 1000  # events a subscriber may fall behind before the next ones are dropped for it
RUN_EVENTS = 500  # events kept per run
RUNS = 200  # runs whose events are kept (the least recently active is forgotten first)
FREE_TEXT_CHARS = 4000  # an event's free text is cut to this (it is a task's words, kept masked and cut already)


@dataclass(kw_only=True)
class Event:
    run_id: str | None
    user_id: str
    seq: int = 0  # set by the bus: hub-wide, increasing
    at: float = 0.0  # set by the bus: unix time
    FREE_TEXT: ClassVar[tuple[str, ...]] = ()  # the fields a person or a model wrote: masked on publish

    @property
    def type(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


@dataclass(kw_only=True)
class UserMessageReceived(Event):
    text: str  # the task as the run keeps it (masked, cut)
    FREE_TEXT: ClassVar[tuple[str, ...]] = ("text",)


@dataclass(kw_only=True)
class ContextUpdated(Event):
    what: str  # "assembled" (the first request), "tool_results" (results added for the next round)
    tokens: int  # the request's estimated size now


@dataclass(kw_only=True)
class ModelRequestFinished(Event):
    round: int
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    error: bool = False


@dataclass(kw_only=True)
class TaskPlanGenerated(Event):
    round: int
    tools: list[str] = field(default_factory=list)  # the tool calls the model asked for, in order


@dataclass(kw_only=True)
class ToolCallRequested(Event):
    call_id: str
    tool: str
    server: str


@dataclass(kw_only=True)
class ToolExecutionFinished(Event):
    call_id: str
    tool: str
    server: str
    outcome: str  # ok, tool_error, input_required, error, cancelled
    seconds: float


@dataclass(kw_only=True)
class RunFinished(Event):
    stop_reason: str
    rounds: int
    input_tokens: int
    output_tokens: int
    seconds: float


@dataclass(kw_only=True)
class ServerStateChanged(Event):
    """A downstream server's state (READY, RESTARTING ...; a ``per_user`` server's as a whole). It is no
    one user's: ``user_id`` is "". No error text: that is for admins (``hermes_hub.app.hub.status``)."""

    server: str
    state: str


class Subscription:
    """One subscriber's bounded queue; ``accept`` picks the events it wants (default: all)."""

    def __init__(self, bus: Bus, name: str, size: int, accept: Callable[[Event], bool] | None) -> None:
        self.bus, self.name, self.accept = bus, name, accept
        self._send: MemoryObjectSendStream[Event]
        self._receive: MemoryObjectReceiveStream[Event]
        self._send, self._receive = anyio.create_memory_object_stream[Event](size)

    def offer(self, event: Event) -> None:
        if self.accept is not None and not self.accept(event):
            return
        try:
            self._send.send_nowait(event)
        except anyio.WouldBlock:
            self.bus.dropped[self.name] += 1

    async def receive(self) -> Event:
        return await self._receive.receive()

    async def beats(self, every: float) -> AsyncIterator[Event | None]:
        """The events as they come, and None each time ``every`` seconds pass without one (a follower's
        heartbeat, so a reader that went away is noticed)."""
        while True:
            with anyio.move_on_after(every) as quiet:
                event = await self._receive.receive()
            yield None if quiet.cancelled_caught else event

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._send.close()
        self._receive.close()


class Bus:
    def __init__(self, *, run_events: int = RUN_EVENTS, runs: int = RUNS, masker: Masker = MASKER) -> None:
        self.masker = masker
        self._seq = itertools.count(1)
        self._subscribers: list[Subscription] = []
        self._runs: OrderedDict[str, deque[Event]] = OrderedDict()
        self._run_events, self._max_runs = run_events, runs
        self.dropped: Counter[str] = Counter()  # events dropped per subscriber name
        self.published = 0

    def publish(self, event: Event) -> None:
        """Hand ``event`` to every subscriber that wants it, without waiting for any."""
        event.seq, event.at = next(self._seq), time.time()
        for name in event.FREE_TEXT:
            if isinstance(text := getattr(event, name), str):
                setattr(event, name, self.masker.text(text, limit=FREE_TEXT_CHARS))
        self.published += 1
        if event.run_id is not None:
            kept = self._runs.get(event.run_id)
            if kept is None:
                kept = self._runs[event.run_id] = deque(maxlen=self._run_events)
                if len(self._runs) > self._max_runs:
                    self._runs.popitem(last=False)
            else:
                self._runs.move_to_end(event.run_id)
            kept.append(event)
        for subscriber in self._subscribers:
            subscriber.offer(event)

    @contextmanager
    def subscribe(self, name: str, *, size: int = QUEUE,
                  accept: Callable[[Event], bool] | None = None) -> Iterator[Subscription]:
        """A queue of the events published while the block runs (``name`` labels its drops)."""
        subscription = Subscription(self, name, size, accept)
        self._subscribers.append(subscription)
        self.dropped.setdefault(name, 0)
        try:
            yield subscription
        finally:
            self._subscribers.remove(subscription)
            subscription.close()

    def stream(self, run_id: str) -> list[Event]:
        """The kept events of run ``run_id``, oldest first (empty for a run unknown or forgotten)."""
        return list(self._runs.get(run_id, ()))

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)


__all__ = ["Bus", "ContextUpdated", "Event", "ModelRequestFinished", "RunFinished", "ServerStateChanged",
           "Subscription", "TaskPlanGenerated", "ToolCallRequested", "ToolExecutionFinished", "UserMessageReceived"]
