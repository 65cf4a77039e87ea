"""Plans that are revised (issue 21): with ``"plan": true`` a profile's run first asks the model for a plan
(ordered steps, each with its purpose, the tool it expects to use and the earlier steps it depends on;
at most ``max_plan_steps``), as JSON. The loop then works step by step with the plan in its instructions;
after each turn's results the model keeps the rest of the plan or revises it, so a result that
contradicts what the plan assumed changes it. Steps whose dependencies are done may be called in one
turn (read-only calls of a turn run at once). ``max_rounds`` still bounds the whole run.

    planner = Planner(model, profile, masker, event, progress)
    await planner.make(task, specs)           # ProviderError when the model cannot answer
    system = base + "\\n\\n" + planner.facts()
    await planner.revise(round_no, [(name, result_text), ...])
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hermes_hub.core.agent.profiles import Profile
from hermes_hub.infra.masking import Masker
from hermes_hub.infra.models import Message, Provider, ToolSpec

MAX_REPLY = 20_000  # characters of a planning answer that are read
MAX_RESULT = 2_000  # characters of each result the revision request quotes
PLAN = "Plan this task:\n"  # the planning request's user message starts so (a script can tell it apart)
REVISE = "Plan revision:\n"
CONFLICTS = ("When two tools' results disagree, prefer the newer and the more specific source, say in your "
             "answer which result you used and why")


@dataclass
class Step:
    id: int
    purpose: str
    tool: str | None = None
    depends_on: list[int] = field(default_factory=list)


Event = Callable[..., None]
Progress = Callable[[str], Awaitable[None]]


class Planner:
    def __init__(self, model: Provider, profile: Profile, masker: Masker, event: Event, progress: Progress) -> None:
        self.model, self.profile, self.masker, self.event, self.progress = model, profile, masker, event, progress
        self.steps: list[Step] = []
        self.done: list[Step] = []
        self.revisions = 0
        self.usage = [0, 0]  # input, output tokens of the planning requests

    async def make(self, task: str, specs: Sequence[ToolSpec]) -> None:
        tools = "\n".join(f"- {s.name}: {(s.description or '').splitlines()[0][:160] if s.description else ''}"
                          for s in specs) or "(none)"
        system = (f"Write a plan for the person's task: at most {self.profile.max_plan_steps} ordered steps, each "
                  f"with its purpose, the tool it expects to use (one of the tools below, or null) and the ids of "
                  f"the earlier steps it depends on. {CONFLICTS}.\n"
                  'Answer as JSON: {"steps": [{"id": 1, "purpose": "...", "tool": "...", "depends_on": []}]}\n\n'
                  f"Tools:\n{tools}")
        raw = await self._ask(PLAN + task, system)
        self.steps = self._steps(raw)
        self.event("plan", steps=[asdict(s) for s in self.steps], max_plan_steps=self.profile.max_plan_steps)
        await self.progress("plan: " + ("; ".join(f"{s.id}. {s.purpose[:80]}" for s in self.steps) or "no steps"))

    async def revise(self, round_no: int, results: list[tuple[str, str]]) -> None:
        """After a turn: mark what ran, then keep the rest of the plan or take the model's revision."""
        ran = {name for name, _ in results}
        finished = [s for s in self.steps if s.tool in ran] or self.steps[:1]
        self.done += finished
        rest = [s for s in self.steps if s not in finished]
        quoted = "\n".join(f"- {name}: {self.masker.text(text)[:MAX_RESULT]}" for name, text in results)
        system = ("You revise a plan after new tool results. If the results fit what the rest of the plan assumed, "
                  'keep it: {"keep": true}. If they contradict it (something missing, already done, different from '
                  'what was expected), answer the new remaining steps and why: {"steps": [{"id": 3, "purpose": '
                  '"...", "tool": "...", "depends_on": []}], "reason": "..."}. When results disagree with each other, '
                  'also name the one you use: "used": {"result": "tool name", "over": "tool name", "why": "..."} '
                  f"({CONFLICTS}). Answer as JSON.")
        message = (f"{REVISE}Plan so far: {json.dumps([asdict(s) for s in self.steps], ensure_ascii=False)}\n"
                   f"Done: {[s.id for s in self.done]}\nNew results:\n{quoted}")
        raw = await self._ask(message, system)
        revised = isinstance(raw, dict) and not raw.get("keep") and isinstance(raw.get("steps"), list)
        self.steps = self._steps(raw, start=len(self.done)) if revised else rest
        if revised:
            self.revisions += 1
        used = raw.get("used") if isinstance(raw, dict) and isinstance(raw.get("used"), dict) else None
        reason = self.masker.text(str(raw.get("reason", "")))[:500] if revised else ""
        self.event("plan_revision", round=round_no, revised=revised, reason=reason,
                   steps=[asdict(s) for s in self.steps], done=[s.id for s in self.done],
                   **({"used": {k: self.masker.text(str(v))[:300] for k, v in used.items()}} if used else {}))
        if revised:
            await self.progress(f"plan revised: {reason[:120] or 'the results changed it'}; next: "
                                + ("; ".join(f"{s.id}. {s.purpose[:60]}" for s in self.steps) or "answer"))

    def take_usage(self) -> tuple[int, int]:
        """Tokens of the planning requests since the last call (the run adds them to its usage)."""
        used, self.usage = (self.usage[0], self.usage[1]), [0, 0]
        return used

    def facts(self) -> str:
        lines = ["Your plan (work through it step by step; steps whose dependencies are done may be called in one "
                 f"turn; {CONFLICTS}):"]
        lines += [f"- done: {s.id}. {s.purpose}" for s in self.done]
        lines += [f"- {s.id}. {s.purpose}" + (f" (tool: {s.tool})" if s.tool else "")
                  + (f" (after {', '.join(map(str, s.depends_on))})" if s.depends_on else "") for s in self.steps]
        if not self.steps:
            lines.append("- nothing left: answer the person")
        return "\n".join(lines)

    async def _ask(self, message: str, system: str) -> Any:
        asked = time.perf_counter()
        reply = await self.model.complete([Message("user", message)], system=system, json_output=True,
                                          max_tokens=min(self.profile.max_tokens, 2048),
                                          temperature=self.profile.temperature, top_p=self.profile.top_p)
        self.usage[0] += reply.usage.input_tokens
        self.usage[1] += reply.usage.output_tokens
        self.event("plan_request", input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
                   seconds=round(time.perf_counter() - asked, 4))
        try:
            return json.loads(reply.text[:MAX_REPLY])
        except json.JSONDecodeError:
            return None

    def _steps(self, raw: Any, start: int = 0) -> list[Step]:
        items = raw.get("steps") if isinstance(raw, dict) else None
        out: list[Step] = []
        for i, item in enumerate((items if isinstance(items, list) else [])[: self.profile.max_plan_steps - start]):
            if not isinstance(item, dict) or not str(item.get("purpose", "")).strip():
                continue
            try:
                sid = int(item.get("id", start + i + 1))
            except (TypeError, ValueError):
                sid = start + i + 1
            deps = [d for d in item.get("depends_on") or [] if isinstance(d, int)][:10]
            tool = item.get("tool") if isinstance(item.get("tool"), str) else None
            out.append(Step(sid, str(item["purpose"])[:300], tool, deps))
        return out
