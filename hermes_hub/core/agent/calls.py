"""The tool calls of one model turn, run for the model through the catalog.

    outcomes = await Calls(agent_parts, profile, ctx, run, offered).turn(reply.tool_calls, round_no)

Calls that change nothing (``readOnlyHint``, or named by ``agent.parallel_tools``) and that are ready to
go (valid arguments, no confirmation needed) run at once, up to ``PARALLEL`` together; every other call
runs alone, in the model's order, confirmed where required (``questions.py``). Outcomes come back in the
model's order whatever order the calls finished in.

Each result is shaped for the model (``results.py``): a tool that found nothing says so; a result past
``max_tool_result_tokens`` is cut and kept whole as an artifact (``artifacts.py``) whose id the model,
the session, the trace and the audit get.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import mcp.types as types

from hermes_hub.core.agent.artifacts import Artifacts
from hermes_hub.core.agent.profiles import Profile
from hermes_hub.core.agent.questions import ask_arguments, confirm
from hermes_hub.core.agent.results import cut, empty, nothing_found, text_of
from hermes_hub.core.aggregation.catalog import Catalog
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError
from hermes_hub.infra.masking import Masker
from hermes_hub.infra.models import ToolCall
from hermes_hub.core.pipeline.approval import approval_of

log = logging.getLogger("hermes_hub.core.agent")
MAX_CORRECTIONS = 2  # invalid-argument calls of one tool the model may correct before the person is asked
CHARS_PER_TOKEN = 4
TRACE_STRING = 1000  # an argument string in the trace and the run's result is cut here, as in the audit
PARALLEL = 8  # calls of one turn running at once
OFF_LOOP = 64 * 1024  # results longer than this are parsed and cut in a worker thread


class RunState(Protocol):
    """What the calls read and keep of their run (``loop.RunResult``)."""

    invalid: dict[str, int]  # tool -> invalid-argument calls in a row
    started: float  # perf_counter at the run's start


@dataclass
class CallRecord:
    name: str
    arguments: dict[str, Any]
    is_error: bool
    seconds: float


@dataclass
class Outcome:
    text: str  # what the model reads
    is_error: bool
    outcome: str  # ok, declined (by the person), needs_input (the run stops to ask the person)
    record: CallRecord
    started: float  # seconds into the run
    artifact_id: str | None = None


@dataclass(frozen=True)
class Tools:
    """What the calls of a run need from the agent: the catalog, the masker, where artifacts go."""

    catalog: Catalog
    masker: Masker
    artifacts: Artifacts | None  # None: a long result is cut and the rest is lost
    reader: str | None  # the public name of hermes_artifact_read, when the model is offered it
    # tools the run answers itself, not through the catalog (delegates, ``delegation.py``): name -> handler
    local: Mapping[str, Callable[[ToolCall], Awaitable[tuple[str, bool]]]] = field(default_factory=dict)


class Calls:
    def __init__(self, tools: Tools, profile: Profile, ctx: CallContext, run: RunState,
                 offered: dict[str, types.Tool]) -> None:
        self.tools, self.profile, self.ctx, self.run, self.offered = tools, profile, ctx, run, offered

    async def turn(self, calls: tuple[ToolCall, ...], round_no: int, progress: Any) -> list[Outcome]:
        """Run ``calls`` (overlapping where allowed); stop after a call that needs the person's input."""
        out: list[Outcome] = []
        i = 0
        while i < len(calls):
            group = [calls[i]]
            while i + len(group) < len(calls) and self._may_overlap(group[-1]) \
                    and self._may_overlap(calls[i + len(group)]):
                group.append(calls[i + len(group)])
            if len(group) == 1:
                await progress(f"calling {group[0].name}")
                out.append(await self.one(group[0]))
                if out[-1].outcome == "needs_input":
                    return out
            else:
                await progress(f"calling {', '.join(c.name for c in group)} (at once)")
                out += await self._together(group)
            i += len(group)
        return out

    def _may_overlap(self, call: ToolCall) -> bool:
        tool = self.offered.get(call.name)
        if tool is None or not isinstance(call.arguments, dict) or "_unparsed_arguments" in call.arguments:
            return False
        hints = tool.annotations
        if self.profile.needs_confirmation(call.name, bool(hints and hints.destructive_hint)):
            return False
        if not self.profile.may_overlap(call.name, bool(hints and hints.read_only_hint)):
            return False
        return not self.tools.catalog.argument_problems(call.name, call.arguments)

    async def _together(self, group: list[ToolCall]) -> list[Outcome]:
        done: list[Outcome | None] = [None] * len(group)
        limiter = anyio.CapacityLimiter(PARALLEL)

        async def one(i: int) -> None:
            async with limiter:
                done[i] = await self.one(group[i])

        async with anyio.create_task_group() as tg:
            for i in range(len(group)):
                tg.start_soon(one, i)
        return [d for d in done if d is not None]

    async def one(self, call: ToolCall) -> Outcome:
        """One call: refused, corrected, confirmed or forwarded, and shaped for the model."""
        start = time.perf_counter()
        tool = self.offered.get(call.name)
        outcome, artifact = "ok", None
        if tool is None:
            text, is_error = (f"Unknown tool '{call.name}': use only the tools you were given.", True)
        elif not isinstance(call.arguments, dict) or "_unparsed_arguments" in call.arguments:
            text, is_error = ("Your arguments were not a JSON object; call the tool again with valid JSON.", True)
        elif problems := self.tools.catalog.argument_problems(call.name, call.arguments):
            text, is_error, outcome, artifact = await self._correct(call, tool, problems)
        else:
            self.run.invalid.pop(call.name, None)
            destructive = bool(tool.annotations and tool.annotations.destructive_hint)
            asked = self.profile.needs_confirmation(call.name, destructive)
            verdict = await confirm(self.ctx, call, self.tools.masker) if asked else None
            if verdict is not None:
                text, is_error = verdict, True
                outcome = "declined" if verdict.startswith("The person declined") else "ok"
            else:
                if asked:
                    await self._granted(call)
                text, is_error, artifact = await self._forward(call)
        kept = self.tools.masker(call.arguments, limit=TRACE_STRING) if isinstance(call.arguments, dict) else {}
        record = CallRecord(call.name, kept, is_error, time.perf_counter() - start)
        return Outcome(text, is_error, outcome, record, round(start - self.run.started, 4), artifact)

    async def _granted(self, call: ToolCall) -> None:
        """The person said yes to the run's question: the gateway's approval (``guards.approve``) of exactly
        this call is that yes, so they are asked once, not twice."""
        step = approval_of(self.tools.catalog.pipeline)
        entry = self.tools.catalog.index_of(self.ctx.caller).tools.get(call.name)  # their own listing, if any
        if step is not None and entry is not None and step.rules.needs(call.name, entry.item):
            await step.book.grant(self.ctx.caller, call.name, entry.mount.source.name, call.arguments, via="agent")

    async def _correct(self, call: ToolCall, tool: types.Tool, problems: list[str],
                       ) -> tuple[str, bool, str, str | None]:
        """Arguments that fail the tool's schema: the model gets ``MAX_CORRECTIONS`` tries to fix them,
        then the person is asked for them (elicitation), else the run stops with ``needs_input``."""
        run = self.run
        failed = run.invalid[call.name] = run.invalid.get(call.name, 0) + 1
        if failed <= MAX_CORRECTIONS:
            listing = "\n".join(f"- {p}" for p in problems)
            return (f"Invalid arguments for tool '{call.name}':\n{listing}\nFix these and call the tool again "
                    f"(correction {failed} of {MAX_CORRECTIONS}).", True, "ok", None)
        given = await ask_arguments(self.ctx, call, tool, problems, MAX_CORRECTIONS)
        if isinstance(given, str):
            return given, True, "needs_input", None
        run.invalid.pop(call.name, None)
        if still := self.tools.catalog.argument_problems(call.name, given):
            return (f"The values given for {call.name} are still not valid ({'; '.join(still)}); the run stopped.",
                    True, "needs_input", None)
        text, is_error, artifact = await self._forward(ToolCall(call.id, call.name, given))
        return text, is_error, "ok", artifact

    async def _forward(self, call: ToolCall) -> tuple[str, bool, str | None]:
        if (local := self.tools.local.get(call.name)) is not None:
            text, is_error = await local(call)
            return text, is_error, None
        try:
            result = await self.tools.catalog.call_tool(call.name, call.arguments, self.ctx.replace(progress=None))
        except HubError as e:
            return str(e), True, None
        if isinstance(result, types.InputRequiredResult):
            return ("The tool asked a question this run cannot pass on; tell the user to call it directly.", True,
                    None)
        return await self._shown(call.name, result)

    async def _shown(self, name: str, result: types.CallToolResult) -> tuple[str, bool, str | None]:
        """(what the model reads, is_error, the artifact keeping the whole result if it was cut)."""
        is_error = bool(result.is_error)
        full, mime = text_of(result)
        if (what := empty(result, full)) is not None:
            return nothing_found(what), False, None
        if not full:
            return "(the tool returned nothing: no text and no data)", is_error, None
        limit = self.profile.max_tool_result_tokens * CHARS_PER_TOKEN
        if len(full) <= limit:
            return full, is_error, None
        artifact = await self._keep(name, full, mime) if name != self.tools.reader else None
        reader = self.tools.reader if artifact else None
        if len(full) > OFF_LOOP:
            shown = await anyio.to_thread.run_sync(lambda: cut(full, mime, limit, artifact_id=artifact, reader=reader))
        else:
            shown = cut(full, mime, limit, artifact_id=artifact, reader=reader)
        return shown, is_error, artifact

    async def _keep(self, tool: str, text: str, mime: str) -> str | None:
        """Keep the whole result as an artifact, with an audit row naming it; None if it cannot be kept."""
        ctx = self.ctx
        if self.tools.artifacts is None or ctx.session_id is None or ctx.run_id is None:
            return None
        try:
            kept = await self.tools.artifacts.keep(ctx.caller.user_id, ctx.session_id, ctx.run_id, tool, text, mime)
        except Exception:  # noqa: BLE001 - the model still gets the cut text; the loss is logged
            log.exception("could not keep the whole result of %s for run %s", tool, ctx.run_id)
            return None
        arguments = {"artifact_id": kept.artifact_id, "tool": tool, "chars": kept.chars}
        async with self.tools.catalog.auditor(caller=ctx.caller, tool="agent.artifact", server=None,
                                              arguments=arguments, session_id=ctx.session_id, run_id=ctx.run_id):
            pass
        return kept.artifact_id
