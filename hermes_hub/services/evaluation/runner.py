"""Run cases through an MCP host connected to the hub: each case in a session of its own, seeded with
its history and memories, its questions answered from the case, its result checked.

    evaluator = Evaluator(profile=None)
    async with hub.client(mode="legacy", elicitation_callback=evaluator.elicitation) as host:
        report = await evaluator.run(host, case_set)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types

from hermes_hub.services.evaluation.cases import Case, CaseSet
from hermes_hub.services.evaluation.checks import check

log = logging.getLogger("hermes_hub.services.evaluation")
CASE_TIMEOUT = 300  # seconds one case may take (a slow local model included)


@dataclass
class Outcome:
    case: Case
    failures: list[str]
    stop_reason: str | None = None
    intents: list[str] | None = None
    tools: list[str] = field(default_factory=list)
    answer: str = ""
    run_id: str | None = None
    asked: int = 0
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.case.id, "passed": self.passed, "failures": self.failures, "stop_reason": self.stop_reason,
                "intents": self.intents, "tools": self.tools, "asked": self.asked, "run_id": self.run_id,
                "seconds": round(self.seconds, 3), "answer": self.answer[:2000], "tags": self.case.tags,
                **({"note": self.case.note} if self.case.note else {})}


@dataclass
class Report:
    outcomes: list[Outcome]

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, "passed": self.passed, "pass_rate": round(self.rate, 4),
                "cases": [o.as_dict() for o in self.outcomes]}


class Evaluator:
    """``profile`` (``--profile``) wins over each case's and the set's."""

    def __init__(self, profile: str | None = None, prefix: str = "hermes_") -> None:
        self.profile = profile
        self.prefix = prefix  # public names of the hub's own tools
        self._answers: list[dict[str, Any]] = []
        self._asked = 0

    async def elicitation(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The person, as the case plays them: the next of its answers, or no when it has none left."""
        self._asked += 1
        if not self._answers:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=self._answers.pop(0))

    async def run(self, host: Any, cases: CaseSet) -> Report:
        outcomes = []
        for case in cases.cases:
            outcomes.append(await self.one(host, case, self.profile or case.profile or cases.profile or "default"))
        return Report(outcomes)

    async def one(self, host: Any, case: Case, profile: str) -> Outcome:
        started = time.perf_counter()
        self._answers, self._asked = [dict(a) for a in case.answers], 0
        remembered: list[str] = []
        try:
            with anyio.fail_after(CASE_TIMEOUT):
                session = (await self._call(host, "session_create", {"title": f"eval {case.id}"}))["session_id"]
                for m in case.history:
                    await self._call(host, "session_append", {"session_id": session, "role": m.role,
                                                              "content": m.content})
                for text in case.memories:
                    kept = await self._call(host, "memory_remember", {"text": text})
                    if kept.get("memory_id"):
                        remembered.append(kept["memory_id"])
                result = await host.call_tool(f"{self.prefix}agent_run", {"task": case.task, "profile": profile,
                                                                         "session_id": session})
        except TimeoutError:
            return Outcome(case, [f"the case did not finish within {CASE_TIMEOUT}s"], seconds=CASE_TIMEOUT)
        except EvalError as e:
            return Outcome(case, [str(e)], seconds=time.perf_counter() - started)
        finally:
            for memory_id in remembered:  # a case's memories are not the next case's
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    await host.call_tool(f"{self.prefix}memory_forget", {"memory_id": memory_id})
        done = dict(result.structured_content or {})
        if not done:
            text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
            return Outcome(case, [f"the run failed: {text[:500]}"], seconds=time.perf_counter() - started)
        done["asked"] = self._asked
        return Outcome(case, check(case.expect, done), done.get("stop_reason"), done.get("intents"),
                       [c["name"] for c in done.get("tool_calls") or []], done.get("answer") or "", done.get("run_id"),
                       self._asked, time.perf_counter() - started)

    async def _call(self, host: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await host.call_tool(f"{self.prefix}{tool}", args)
        if result.is_error:
            text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
            raise EvalError(f"seeding the case failed: {self.prefix}{tool}: {text[:300]}")
        return dict(result.structured_content or {})


class EvalError(Exception):
    """A case that could not be set up; its outcome says why."""
