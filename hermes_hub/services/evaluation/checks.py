"""What a case expects, checked against what its run did: each failure is a sentence a person can act on.

    failures = check(case.expect, done)   # done: hermes_agent_run's structured result, plus "asked"
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from typing import Any

from hermes_hub.services.evaluation.cases import Expect, ToolExpect


def check(expect: Expect, done: dict[str, Any]) -> list[str]:
    calls: list[dict[str, Any]] = done.get("tool_calls") or []
    answer: str = done.get("answer") or ""
    out: list[str] = []
    start = 0
    for want in expect.tools:  # in order: each one after the call that matched the one before
        found = next((i for i in range(start, len(calls)) if _matches(want, calls[i])), None)
        if found is None:
            out.append(f"expected a call {_describe(want)}; the calls were: {_listing(calls)}")
        else:
            start = found + 1
    for glob in expect.not_tools:
        hit = [c["name"] for c in calls if fnmatchcase(c["name"], glob)]
        if hit:
            out.append(f"{hit[0]} was called, but no call may match {glob!r}")
    low = answer.casefold()
    out += [f"the answer does not contain {t!r}; it was: {_short(answer)}" for t in expect.contains
            if t.casefold() not in low]
    out += [f"the answer contains {t!r}, which it must not; it was: {_short(answer)}" for t in expect.not_contains
            if t.casefold() in low]
    if expect.stop_reason is not None and done.get("stop_reason") != expect.stop_reason:
        out.append(f"the run ended with {done.get('stop_reason')!r}, expected {expect.stop_reason!r}")
    if expect.intents is not None and done.get("intents") != expect.intents:
        out.append(f"routed to {done.get('intents')}, expected {expect.intents}")
    if expect.asked is not None and done.get("asked", 0) != expect.asked:
        out.append(f"the person was asked {done.get('asked', 0)} questions, expected {expect.asked}")
    if expect.differs_from is not None and " ".join(answer.split()) == " ".join(expect.differs_from.split()):
        out.append("the answer is the same as the one that was rated down")
    return out


def _matches(want: ToolExpect, call: dict[str, Any]) -> bool:
    if not fnmatchcase(call.get("name", ""), want.name):
        return False
    if want.is_error is not None and bool(call.get("is_error")) != want.is_error:
        return False
    args = call.get("arguments") or {}
    return all(_value(m, key in args, args.get(key)) for key, m in want.arguments.items())


def _value(matcher: Any, present: bool, value: Any) -> bool:
    if isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)).startswith("$"):
        (op, arg), = matcher.items()
        if op == "$present":
            return present == bool(arg)
        if not present:
            return False
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if op == "$regex":
            return re.search(str(arg), text) is not None
        if op == "$contains":
            return str(arg).casefold() in text.casefold()
        return value in arg  # $any_of
    return present and value == matcher


def _describe(want: ToolExpect) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in want.arguments.items())
    error = "" if want.is_error is None else " failing" if want.is_error else " succeeding"
    return f"{want.name}({args}){error}"


def _listing(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "none"
    return ", ".join(f"{c['name']}({_short(json.dumps(c.get('arguments') or {}, ensure_ascii=False), 120)})"
                     + (" failed" if c.get("is_error") else "") for c in calls[:12])


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")
