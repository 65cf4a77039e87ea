"""One agent run: a model working through the catalog's tools for the caller, with guards.

    result = await Agent(catalog, sessions, memories, model, hub_prefix="hermes").run(
        "plan my week", profile, ctx, session_id=None)

1. Hold the session's lock (a second writer gets "session busy" at once).
2. Recall the caller's memories for the task and what the session is about, once, so the prompt prefix
   stays stable; only those above ``recall_min_score``, as related background (``background.py``).
3. Build the request within the profile's token budget: instructions, memories, the session's
   summary, its last ``window`` messages, the task (``context.py``).
4. Offer only the tools the caller may use and the profile allows; the agent's own tools are never
   offered (no recursion). Each call goes through ``Catalog.call_tool`` with the caller's context,
   so validation, roles, timeouts, the audit and relaying apply as for a host's call.
5. Guards: ``max_rounds``; three identical tool results in a row end the run; arguments that fail the
   tool's schema go back to the model naming each field, and after ``MAX_CORRECTIONS`` failed
   corrections the person is asked for them, or the run stops with ``needs_input``; a tool that is
   destructive or matches ``confirm`` needs the person's yes through the host (``questions.py``), and
   is refused when the host cannot ask. The calls of one turn run in ``calls.py``: read-only ones at
   once, the rest one by one; a result past ``max_tool_result_tokens`` is cut for the model and kept
   whole as an artifact it can page through; an empty one is named as "nothing found".
   At most ``agent.max_concurrent`` runs execute at once per hub (``gate.py``); the rest wait their turn.
6. Every message (task, assistant turns with their tool calls, tool results, answer) is appended to
   the session with the run id, also when the run fails or is cancelled; memory extraction then
   picks them up from its queue. What is kept (the session's tool calls, the trace, the result's
   ``tool_calls``) has secrets masked (``hermes_hub.infra.masking``); the model and the tools get them as given.
   The trace records what each model request held and what came back (``prompts.py``).
7. Issue 21, each a profile option (the plain loop stays the default): ``intents`` route the task first and
   offer only the routed intents' tools (``routing.py``); ``plan`` writes a plan and revises it after each
   turn (``planning.py``); ``delegates`` are other profiles offered as tools, each call a child run within
   this run's tools and a bounded depth (``delegation.py``).
8. With ``memory.working_judge``, the background model then folds the run into the session's working
   memory (``working.py``), which every later run of the session reads before its history.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import anyio

from hermes_hub.core.agent.artifacts import Artifacts
from hermes_hub.core.agent.background import background
from hermes_hub.core.agent.calls import Calls, Tools
from hermes_hub.core.agent.completion import finish, settings
from hermes_hub.core.agent.context import Budget, build_request, time_note, tokens
from hermes_hub.core.agent.delegation import Delegates, Depth, handlers
from hermes_hub.core.agent.gate import RunGate
from hermes_hub.core.agent.instructions import render
from hermes_hub.core.agent.planning import Planner
from hermes_hub.core.agent.observer import Observer
from hermes_hub.core.agent.profiles import Profile
from hermes_hub.core.agent.prompts import PromptLog
from hermes_hub.core.agent.routing import Router
from hermes_hub.core.agent.summaries import Summarizer
from hermes_hub.core.agent.turns import Request, RunResult, ask_round, take_results
from hermes_hub.core.agent.working import remember_working
from hermes_hub.core.aggregation import apps
from hermes_hub.core.aggregation.catalog import ORIGIN_META, Catalog
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError
from hermes_hub.infra.events import Bus
from hermes_hub.infra.masking import MASKER, Masker
from hermes_hub.services.memory import Memories
from hermes_hub.services.memory.working import WorkingMemory
from hermes_hub.services.memory.timeparse.zones import zone
from hermes_hub.infra.models import Message, Provider, ProviderError, ToolSpec
from hermes_hub.infra.models.sampling import SamplingProvider
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage.records import RunRecord, utcnow
from hermes_hub.core.toolsets.search import top_tools

log = logging.getLogger("hermes_hub.core.agent")
REPEAT_LIMIT = 3  # identical tool results in a row that end a run
STOP_REASONS = ("answered", "max_rounds", "repeated_results", "needs_input", "declined", "cancelled", "model_error",
                "length")  # length: the answer was cut by max_tokens, also after one continuation


class Agent:
    def __init__(self, catalog: Catalog, sessions: Sessions, memories: Memories | None, model: Provider | None,
                 *, own_tools: str, summaries: Summarizer | None = None,
                 model_for: Callable[[Profile], Provider | None] | None = None, masker: Masker = MASKER,
                 artifacts: Artifacts | None = None, artifact_reader: str | None = None,
                 gate: RunGate | None = None,
                 budget: Callable[[str, int], Awaitable[str | None]] | None = None,
                 profiles: Callable[[str], Profile] | None = None, events: Bus | None = None,
                 servers_up: Callable[[], Awaitable[None]] | None = None) -> None:
        self.catalog, self.sessions, self.memories, self.model = catalog, sessions, memories, model
        self.servers_up = servers_up  # waits (briefly, once) for servers still starting, before tools are listed
        self.masker = masker  # what the run keeps and reports (trace, result) holds no secret; the tools get them
        self.model_for = model_for  # a profile's own model (its overrides of ``agent``); else ``model``
        self.summaries = summaries  # folds what slid out of the window into the session's summary
        self.own_tools = own_tools  # public-name prefix of the agent's own tools, never offered to it
        self.artifacts = artifacts  # where a cut result is kept whole; None: the rest is lost
        self.artifact_reader = artifact_reader  # public name of hermes_artifact_read, offered once a run has one
        self.gate = gate  # the hub's limit on runs at once (agent.max_concurrent); None: no limit
        self.budget = budget  # guards.limits tokens_per_day: counts a reply's tokens, says when the day's are spent
        self.profiles = profiles  # a profile by name, for delegates (issue 21); None: no delegation
        self.events = events  # the hub's event bus (hermes_hub.infra.events): the run's events go there

    async def run(self, task: str, profile: Profile, ctx: CallContext, *, session_id: str | None = None) -> RunResult:
        model = self.model_for(profile) if self.model_for is not None else self.model
        if model is None:
            raise HubError(f"no model is configured for profile '{profile.name}', so the agent cannot run; set "
                           f"agent.provider in hub.json (anthropic, openai, sampling for the host's own model, or "
                           f"scripted with a rules file)")
        if isinstance(model, SamplingProvider):
            model = model.for_host(ctx.host)
        gate = self.gate
        if gate is None:
            return await self._run(task, profile, ctx, model, session_id)

        async def waiting(ahead: int) -> None:  # the host hears why nothing happens yet
            await _progress(ctx, 0, profile.max_rounds, f"waiting for a free run slot ({ahead} waiting ahead; "
                                                         f"agent.max_concurrent is {gate.limit})")

        async with gate.slot(ctx.caller.user_id, waiting):
            return await self._run(task, profile, ctx, model, session_id)

    async def _run(self, task: str, profile: Profile, ctx: CallContext, model: Provider,
                   session_id: str | None, depth: Depth | None = None) -> RunResult:
        uid = ctx.caller.user_id
        depth = depth or Depth(0, profile.max_delegation_depth)
        if session_id is None:
            session_id = (await self.sessions.create(uid, task[:80])).session_id
        else:
            await self.sessions.get(uid, session_id)  # NotFound for another user's session, as for a missing one
        run = RunResult("", session_id, "run_" + secrets.token_urlsafe(9), "answered")
        if depth.parent is not None:  # a delegated run: a child of its caller's in the trace
            run.event("delegated", parent_run_id=depth.parent, depth=depth.level)
        started_at = utcnow()
        ctx = ctx.replace(session_id=session_id, run_id=run.run_id)  # the audit rows of its calls name the run
        observer = Observer(self.events, run.run_id, uid)
        with observer.running(profile.name, session_id, self.masker.text(task, limit=2000), run):
            async with self.sessions.lock(uid, session_id) as lease:
                transcript: list[dict[str, Any]] = [{"role": "user", "content": task}]
                try:
                    await self._rounds(task, profile, ctx, run, transcript, model, depth, observer)
                except anyio.get_cancelled_exc_class():
                    run.stop_reason, run.answer = "cancelled", "The run was cancelled before it finished."
                    raise
                finally:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                        run.answer = run.answer or "The run failed before it finished."
                        transcript.append({"role": "assistant", "content": run.answer})
                        for m in transcript:
                            m["metadata"] = {**(m.get("metadata") or {}), "run_id": run.run_id}
                        await self.sessions.append_many(uid, session_id, transcript, lease=lease)
                        await self._keep(run, profile, task, uid, started_at)
                        await self._fold_later(uid, session_id, profile)
                await remember_working(self.memories, self.summaries, uid, session_id, transcript)
        return run

    async def _child(self, task: str, profile: Profile, ctx: CallContext, depth: Depth) -> RunResult:
        """A delegated run: the profile's own model, a session of its own, no second slot of the run gate."""
        model = self.model_for(profile) if self.model_for is not None else self.model
        if model is None:
            raise HubError(f"no model is configured for profile '{profile.name}'")
        if isinstance(model, SamplingProvider):
            model = model.for_host(ctx.host)
        return await self._run(task, profile, ctx, model, None, depth)

    async def _keep(self, run: RunResult, profile: Profile, task: str, user_id: str, started_at: Any) -> None:
        """Store the run and its trace (a trace that cannot be written is logged, never fails the run)."""
        record = RunRecord(run.run_id, user_id, run.session_id, profile.name, self.masker.text(task, limit=2000),
                           started_at, utcnow(), run.stop_reason, run.rounds, run.input_tokens, run.output_tokens,
                           self.masker.text(run.answer), run.trace)
        try:
            await self.sessions.store.add_run(record)
        except Exception:  # noqa: BLE001
            log.exception("could not store the trace of run %s", run.run_id)

    async def _fold_later(self, user_id: str, session_id: str, profile: Profile) -> None:
        if self.summaries is None:
            return
        try:
            count = (await self.sessions.get(user_id, session_id)).message_count
            await self.summaries.request(user_id, session_id, message_count=count, window=profile.window)
        except Exception:  # noqa: BLE001 - a summary is help for later runs, never a reason to fail this one
            log.exception("could not ask for a summary of session %s", session_id)

    async def _rounds(self, task: str, profile: Profile, ctx: CallContext, run: RunResult,
                      transcript: list[dict[str, Any]], model: Provider, depth: Depth, observer: Observer) -> None:
        req = await self._prepare(task, profile, ctx, run, model, depth, observer)
        if req is None:
            return
        results: list[str] = []
        declined = False
        prompts = PromptLog(self.masker)
        for round_no in range(1, profile.max_rounds + 1):
            run.rounds = round_no
            await _progress(ctx, round_no, profile.max_rounds, f"round {round_no}/{profile.max_rounds}: thinking")
            log.info("run %s round %d: %d messages, ~%d tokens", run.run_id, round_no, len(req.messages), req.estimate)
            reply = await ask_round(model, req, profile, run, round_no, prompts, observer, self.masker)
            if reply is None:
                return
            spent = self.budget and await self.budget(ctx.caller.user_id, reply.usage.input_tokens
                                                      + reply.usage.output_tokens)
            if spent and reply.tool_calls:  # an answer already paid for is kept; no further round is
                run.stop_reason, run.answer = "budget", f"The run stopped before its next round: {spent}"
                return
            if not reply.tool_calls:  # issue 20: an answer cut by max_tokens is continued once, or said to be cut
                run.answer, cut, more = await finish(model, req.messages, req.system, profile, reply, lambda **f: run.event(
                    "request", round=round_no, provider=model.name, **{k: self.masker.text(v) if k == "error" else v
                                                                      for k, v in f.items()}))
                if more is not None:
                    observer.replied(round_no, model.name, more)
                    run.input_tokens += more.usage.input_tokens
                    run.output_tokens += more.usage.output_tokens
                run.stop_reason = "length" if cut else "declined" if declined else "answered"
                return
            req.messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            observer.planned(round_no, [c.name for c in reply.tool_calls])
            req.estimate += tokens(reply.text) + sum(tokens(json.dumps(c.arguments)) for c in reply.tool_calls)
            transcript.append({"role": "assistant", "content": reply.text,
                               "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                              for c in reply.tool_calls]})

            async def progress(what: str, n: int = round_no) -> None:
                await _progress(ctx, n, profile.max_rounds, f"round {n}/{profile.max_rounds}: {what}")

            outcomes = await req.calls.turn(reply.tool_calls, round_no, progress)
            refused, stop = take_results(req, run, round_no, reply.tool_calls, outcomes, transcript, results)
            declined = declined or refused
            if stop:
                return
            if req.planner is not None and round_no < profile.max_rounds:
                try:
                    await req.planner.revise(round_no, [(c.name, d.text) for c, d in zip(reply.tool_calls, outcomes)])
                    run.count(req.planner.take_usage())
                except ProviderError as e:  # the plan stays as it was; the run goes on
                    run.event("plan_revision", round=round_no, error=self.masker.text(str(e)))
                req.system = f"{req.base}\n\n{req.planner.facts()}"
            observer.context("tool_results", req.estimate)
            if len(results) >= REPEAT_LIMIT and len(set(results[-REPEAT_LIMIT:])) == 1:
                run.stop_reason = "repeated_results"
                run.answer = (f"I stopped: the last {REPEAT_LIMIT} tool calls returned the same result, so "
                              f"repeating them would not help. Last result: {results[-1][:500]}")
                return
        run.stop_reason = "max_rounds"
        run.answer = (f"Not finished: I used all {profile.max_rounds} rounds. Done so far: "
                      f"{', '.join(c.name for c in run.tool_calls) or 'no tool calls'}.")

    async def _prepare(self, task: str, profile: Profile, ctx: CallContext, run: RunResult, model: Provider,
                       depth: Depth, observer: Observer) -> Request | None:
        """The first request: the session's context, the routed tools, delegates, the plan; None when routing
        or planning ended the run (its stop_reason and answer set)."""
        uid = ctx.caller.user_id
        session = await self.sessions.get(uid, run.session_id)
        # issue 20 (context): background for the task and what the session is about, above the floor
        title = session.title or ""
        about = session.summary if title == task[:80] else f"{title}. {session.summary}"
        found = await background(self.memories, uid, task, about=about, floor=profile.recall_min_score)
        history = (await self.sessions.history(uid, run.session_id, limit=max(1, profile.window),
                                               newest_first=True)).messages if profile.window else []
        if self.servers_up is not None:  # a run right after the hub starts sees the servers a host would
            await self.servers_up()
        tools = [t for t in self.catalog.list_tools(ctx.caller)  # the caller's tools, on the endpoint called
                 if profile.offers(t.name) and not t.name.startswith(self.own_tools) and apps.for_model(t)
                 and (ctx.in_scope is None or ctx.in_scope(t.name))]
        within = frozenset(t.name for t in tools)  # what a delegated run may reach, at most
        route = None
        if profile.intents:  # issue 21: route first; only the routed intents' tools are offered
            if (route := await self._route(task, profile, ctx, run, model)) is None:
                return None
            tools = [t for t in tools if route.offers(t.name)]
        allowed = len(tools)  # past max_tools, the model gets the tools search finds for the task
        reader = next((t for t in tools if t.name == self.artifact_reader), None)
        tools = await top_tools(tools, task, profile.max_tools)
        delegates = (Delegates(profile, depth, self.profiles, self._child, run.event, run.run_id)
                     if profile.delegates and self.profiles is not None else None)
        tools += delegates.tools() if delegates else []  # issue 21: other profiles, offered as tools
        by_name = {t.name: t for t in tools}
        specs = [ToolSpec(t.name, t.description or "", t.input_schema) for t in tools]
        resolver = next((t.name for t in tools if t.name.endswith("time_resolve")
                         and (t.meta or {}).get(ORIGIN_META, {}).get("server") == "hermes"), None)
        system, messages, sizes = build_request(
            Budget(profile.request_tokens), render(profile.parts, specs), found.lines, session.summary,
            list(reversed(history)), task, specs, time_note=time_note(_now(profile), resolver),
            working=await WorkingMemory(self.sessions.store).text(uid, run.session_id))
        base = system = f"{system}\n\n{route.facts()}" if route is not None else system
        planner = None
        if profile.plan:  # issue 21: a plan first, revised after each turn's results
            if (planner := await self._plan(task, profile, ctx, run, model, specs)) is None:
                return None
            system = f"{base}\n\n{planner.facts()}"
        log.info("run %s: %s", run.run_id, sizes)
        run.event("budget", profile=profile.name, tokens=sizes, tools_offered=len(specs), tools_allowed=allowed,
                  memories=len(found.ids), memory_ids=found.ids, memory_relevance=found.relevance,
                  memories_below_floor=found.below_floor, request_tokens=profile.request_tokens,
                  context_window=profile.context_window, **settings(profile))
        calls = Calls(Tools(self.catalog, self.masker, self.artifacts, reader.name if reader else None,
                            handlers(delegates, ctx, within)), profile, ctx, run, by_name)
        observer.context("assembled", sizes["total"])
        return Request(system, base, planner, messages, specs, by_name, reader, calls, sizes["total"])

    async def _route(self, task: str, profile: Profile, ctx: CallContext, run: RunResult, model: Provider) -> Any:
        """The task's intents (issue 21), or None when routing ended the run: a model error, or a question back."""
        try:
            route = await Router(model, profile, self.masker).route(
                task, ctx, run.event, lambda what: _progress(ctx, 0, profile.max_rounds, what))
        except ProviderError as e:
            run.stop_reason, run.answer = "model_error", f"The model could not route the request: " \
                                                         f"{self.masker.text(str(e))}"
            return None
        run.intents = route.names
        run.count(route.usage)
        if route.question is not None:
            run.stop_reason, run.answer = "needs_input", route.question
            return None
        return route

    async def _plan(self, task: str, profile: Profile, ctx: CallContext, run: RunResult, model: Provider,
                    specs: list[ToolSpec]) -> Planner | None:
        """A plan for the task (issue 21), or None when the model could not make one (the run ends)."""
        planner = Planner(model, profile, self.masker, run.event,
                          lambda what: _progress(ctx, 0, profile.max_rounds, what))
        try:
            await planner.make(task, specs)
            run.count(planner.take_usage())
        except ProviderError as e:
            run.stop_reason, run.answer = "model_error", f"The model could not plan: {self.masker.text(str(e))}"
            return None
        return planner

def _now(profile: Profile) -> datetime:
    """The current time in the person's zone (``agent.timezone``; the hub keeps no per-user zone)."""
    try:
        return datetime.now(zone(profile.timezone))
    except ValueError:  # validated in hub.json; a zone removed from the system since falls back
        return datetime.now().astimezone()


async def _progress(ctx: CallContext, value: int, total: int, message: str) -> None:
    if ctx.progress is not None:
        try:
            await ctx.progress(value, total, message)
        except Exception:  # noqa: BLE001 - a host that went away does not end the run
            log.debug("progress could not be sent: %s", message)
