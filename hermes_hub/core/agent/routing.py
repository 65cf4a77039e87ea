"""The router above the tool loop (issue 21): a profile with ``intents`` first maps the request to one or
more of them, each with a confidence and the slot values the request states, as JSON from the model.

    route = await Router(model, profile, masker).route(task, ctx, event, progress)
    route.question        # set: the run stops with needs_input and this question
    route.offers(name)    # only the routed intents' tools (and their fallback_tool) are offered
    route.facts()         # the route and its slots, for the model's instructions

Below ``routing.confidence_threshold``, or with a required slot missing, ``fallback`` decides: ``ask``
the person through the host (an elicitation form: which intent, then the missing slots) and stop with
the question when the host cannot ask; ``stop`` with the question; ``best``: go on with the best guess
and name what is missing to the model. Two intents in one request are routed to both, in order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

import mcp.types as types

from hermes_hub.core.agent.profiles import Profile
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.config.intents import IntentConfig
from hermes_hub.infra.masking import Masker
from hermes_hub.infra.models import Message, Provider, ProviderError

MAX_ROUTED = 5  # intents one request may be routed to
MAX_REPLY = 20_000  # characters of the model's routing answer that are read
MAX_SLOT = 500  # characters of one slot value
PREFIX = "Route this request:\n"  # the routing request's user message starts so (a script can tell it apart)


@dataclass
class Routed:
    intent: IntentConfig
    confidence: float
    slots: dict[str, str] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        return [s for s in self.intent.required if not self.slots.get(s)]


@dataclass
class Route:
    routed: list[Routed]
    question: str | None = None  # the run stops for input with this question
    asked: int = 0  # questions the person answered
    best_guess: bool = False  # fallback "best" went on although unsure or short of a slot
    usage: tuple[int, int] = (0, 0)  # input and output tokens of the routing request

    @property
    def names(self) -> list[str]:
        return [r.intent.name for r in self.routed]

    def offers(self, tool: str) -> bool:
        if not any(r.intent.tools for r in self.routed):
            return True  # intents that name no tools keep the profile's
        return any(tool == r.intent.fallback_tool or any(fnmatchcase(tool, g) for g in r.intent.tools)
                   for r in self.routed)

    def facts(self) -> str:
        lines = ["The request was routed to these intents; do them in this order:"]
        for i, r in enumerate(self.routed, start=1):
            slots = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in r.slots.items()) or "none"
            line = f"{i}. {r.intent.name} ({r.intent.description}); slots: {slots}"
            if r.missing:
                line += f"; not given: {', '.join(r.missing)} (ask the person for them instead of guessing)"
            if r.intent.fallback_tool:
                line += f"; when unsure which tool fits, use {r.intent.fallback_tool}"
            lines.append(line)
        return "\n".join(lines)

    def summary(self, masker: Masker) -> list[dict[str, Any]]:
        return [{"intent": r.intent.name, "confidence": r.confidence,
                 "slots": {k: masker.text(v) for k, v in r.slots.items()}, "missing": r.missing}
                for r in self.routed]


Event = Callable[..., None]
Progress = Callable[[str], Awaitable[None]]


class Router:
    def __init__(self, model: Provider, profile: Profile, masker: Masker) -> None:
        self.model, self.profile, self.masker = model, profile, masker
        self.by_name = {i.name: i for i in profile.intents}

    async def route(self, task: str, ctx: CallContext, event: Event, progress: Progress) -> Route:
        """Route ``task``; ask the person when the profile's routing says so. Raises ProviderError."""
        asked = time.perf_counter()
        try:
            reply = await self.model.complete([Message("user", PREFIX + task)], system=self.system(), json_output=True,
                                              max_tokens=min(self.profile.max_tokens, 1024),
                                              temperature=self.profile.temperature, top_p=self.profile.top_p)
        except ProviderError as e:
            event("route", error=self.masker.text(str(e)), seconds=round(time.perf_counter() - asked, 4))
            raise
        route = Route(self.parse(reply.text), usage=(reply.usage.input_tokens, reply.usage.output_tokens))
        threshold, fallback = self.profile.routing.confidence_threshold, self.profile.routing.fallback
        first = route.summary(self.masker)
        if self.unsure(route) or self.short(route):
            if fallback == "best":
                route.best_guess = True
                if not route.routed:  # nothing recognised: every intent stays possible
                    route.routed = [Routed(i, 0.0) for i in self.profile.intents]
            elif fallback == "ask" and ctx.host.elicit is not None:
                await self.ask(route, ctx)
            else:
                route.question = self.question(route)
        event("route", intents=route.summary(self.masker), first=first, threshold=threshold, fallback=fallback,
              asked=route.asked, best_guess=route.best_guess, outcome="needs_input" if route.question else "routed",
              input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
              seconds=round(time.perf_counter() - asked, 4))
        if route.question is None:
            described = " then ".join(
                f"{r.intent.name} ({r.confidence:.2f}"
                + "".join(f"; {k}={self.masker.text(v)[:60]}" for k, v in r.slots.items()) + ")" for r in route.routed)
            await progress(f"routed to {described}")
        return route

    def system(self) -> str:
        lines = ["Route the person's request to the intents below that it asks for, in the order it asks for them.",
                 "For each give your confidence from 0 to 1 that the request means it, and the value of each slot "
                 "the request states, in the person's words; leave out slots it does not state. A vague request "
                 "gets a low confidence.",
                 'Answer as JSON: {"intents": [{"name": "...", "confidence": 0.9, "slots": {"slot": "value"}}]}',
                 "", "Intents:"]
        for i in self.profile.intents:
            slots = (f"; required slots: {', '.join(i.required) or 'none'}"
                     + (f"; optional slots: {', '.join(i.optional)}" if i.optional else ""))
            lines.append(f"- {i.name}: {i.description}{slots}")
        return "\n".join(lines)

    def parse(self, text: str) -> list[Routed]:
        """The intents the model named that the profile has, in its order; whatever else it wrote is dropped."""
        try:
            raw = json.loads(text[:MAX_REPLY])
        except json.JSONDecodeError:
            return []
        items = raw.get("intents") if isinstance(raw, dict) else None
        out: list[Routed] = []
        for item in (items if isinstance(items, list) else [])[:MAX_ROUTED]:
            if not isinstance(item, dict) or (intent := self.by_name.get(str(item.get("name")))) is None:
                continue
            if any(r.intent.name == intent.name for r in out):
                continue
            try:
                confidence = min(1.0, max(0.0, float(item.get("confidence", 0))))
            except (TypeError, ValueError):
                confidence = 0.0
            known = {*intent.required, *intent.optional}
            given = item.get("slots") if isinstance(item.get("slots"), dict) else {}
            slots = {k: _slot(v) for k, v in given.items() if k in known and v not in (None, "", [])}
            out.append(Routed(intent, confidence, slots))
        return out

    def unsure(self, route: Route) -> bool:
        return not route.routed or any(r.confidence < self.profile.routing.confidence_threshold for r in route.routed)

    @staticmethod
    def short(route: Route) -> bool:
        return any(r.missing for r in route.routed)

    def question(self, route: Route) -> str:
        if self.unsure(route):
            guess = (f" (my best guess: {', '.join(f'{r.intent.name} at {r.confidence:.2f}' for r in route.routed)})"
                     if route.routed else "")
            options = "; ".join(f"{i.name}: {i.description}" for i in self.profile.intents)
            return f"I am not sure what you want{guess}. Which of these do you mean? {options}. Tell me and ask again."
        needs = "; ".join(f"to {r.intent.name} I need {', '.join(r.missing)}" for r in route.routed if r.missing)
        return f"I need more to go on: {needs}. Tell me and ask again."

    async def ask(self, route: Route, ctx: CallContext) -> None:
        """Ask which intent (when unsure), then the missing slots; sets ``route.question`` when the person
        does not answer."""
        assert ctx.host.elicit is not None
        if self.unsure(route):
            names = [i.name for i in self.profile.intents]
            schema: dict[str, Any] = {"type": "object", "required": ["intent"], "properties": {"intent": {
                "type": "string", "title": "What do you want to do?", "enum": names,
                "enumNames": [f"{i.name}: {i.description}"[:100] for i in self.profile.intents]}}}
            if route.routed:
                schema["properties"]["intent"]["default"] = max(route.routed, key=lambda r: r.confidence).intent.name
            answer = await self._elicit(ctx, self.question(route), schema)
            if answer is None or answer.get("intent") not in self.by_name:
                route.question = self.question(route)
                return
            route.asked += 1
            chosen = next((r for r in route.routed if r.intent.name == answer["intent"]), None)
            route.routed = [chosen or Routed(self.by_name[answer["intent"]], 1.0)]
            route.routed[0].confidence = 1.0  # the person said so
        missing = [(r, s) for r in route.routed for s in r.missing]
        if not missing:
            return
        props = {f"{r.intent.name}.{s}" if len(route.routed) > 1 else s: {"type": "string", "title": s,
                                                                          "maxLength": MAX_SLOT}
                 for r, s in missing}
        answer = await self._elicit(ctx, self.question(route), {"type": "object", "properties": props,
                                                                 "required": list(props)})
        if answer is None:
            route.question = self.question(route)
            return
        route.asked += 1
        for (r, s), key in zip(missing, props):
            if answer.get(key) not in (None, ""):
                r.slots[s] = _slot(answer[key])
        if self.short(route):
            route.question = self.question(route)

    async def _elicit(self, ctx: CallContext, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        assert ctx.host.elicit is not None
        try:
            answer = await ctx.host.elicit(types.ElicitRequestFormParams(message=message[:1000],
                                                                         requested_schema=schema))
        except Exception:  # noqa: BLE001 - a host that fails to ask: the run stops for input
            return None
        return answer.content if answer.action == "accept" and answer.content else None


def _slot(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:MAX_SLOT]
