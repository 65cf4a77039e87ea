"""What one model request holds, fitted into the profile's token budget.

Parts, in the order they are kept when the budget is tight: the instructions (with the current time,
``time_note``), the task, the tool definitions, the session's working memory (``memory/working.py``),
the related background (recalled memories, ``background.py``), the session's summary, then the session's last messages from the newest back.
The budget is the profile's ``request_tokens``: ``context_tokens``, less where the model's window would
otherwise leave the answer less than ``max_tokens``. Tokens are counted with o200k_base where ``bpe-openai`` loads (the tokenizer of
OpenAI's current models; for other vendors much closer than a character ratio, above all for Chinese,
where a character is about a token), else estimated at four characters a token; ``sizes`` says what
each part cost and which count was used, for the run's log line and trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hermes_hub.core.agent.background import HEADER
from hermes_hub.services.memory.timeparse.zones import zone_name
from hermes_hub.services.memory.working import HEADER as WORKING_HEADER
from hermes_hub.infra.models import Message, ToolSpec
from hermes_hub.core.toolsets.tokens import tokenizer

CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    return _count()(text) + 1  # +1: each part's framing


def _count() -> Callable[[str], int]:
    name, count = tokenizer()
    return count if name.startswith("o200k") else (lambda text: len(text) // CHARS_PER_TOKEN)


def counted_with() -> str:
    return "o200k_base" if tokenizer()[0].startswith("o200k") else f"{CHARS_PER_TOKEN} characters a token"


@dataclass
class Budget:
    total: int
    used: int = 0

    def take(self, cost: int) -> bool:
        if self.used + cost > self.total:
            return False
        self.used += cost
        return True


def time_note(now: datetime, resolver: str | None) -> str:
    """The run's current time, for the instructions, and the rule for times given to tools.

        time_note(datetime(2026, 12, 1, 21, 5, tzinfo=ZoneInfo("Asia/Shanghai")), "hermes_time_resolve")
        # "Now: Tuesday 2026-12-01 21:05 in Asia/Shanghai (UTC+08:00), the user's timezone. Give every ..."
    """
    offset = now.strftime("%z")
    offset = f"{offset[:3]}:{offset[3:]}" if offset else "+00:00"
    how = (f"call {resolver} to turn words like 'tomorrow at 10' or '下周一上午十点' into one, or compute it "
           f"from the time above") if resolver else "compute it from the time above"
    return (f"Now: {now.strftime('%A %Y-%m-%d %H:%M')} in {zone_name(now.tzinfo)} (UTC{offset}), the user's "
            f"timezone. Give every time to a tool as an absolute ISO 8601 date-time with its offset (e.g. "
            f"{now.replace(second=0, microsecond=0).isoformat()}); {how}.")


def build_request(budget: Budget, instructions: str, memories: list[str], summary: str, history: list[Any],
                  task: str, tools: list[ToolSpec], *, time_note: str = "",
                  working: str = "") -> tuple[str, list[Message], dict[str, Any]]:
    """(system prompt, messages, sizes in tokens). ``history``: the session's messages, oldest first;
    ``memories``: background lines (``background.line``), most relevant first; ``working``: the session's
    working memory (``memory.working``), kept before the memories, the summary and the history."""
    sizes: dict[str, Any] = {}
    if time_note:
        instructions = f"{instructions}\n\n{time_note}"
    budget.take(sizes.setdefault("instructions", tokens(instructions)))
    budget.take(sizes.setdefault("task", tokens(task)))
    budget.take(sizes.setdefault("tools", sum(tokens(json.dumps(t.input_schema)) + tokens(t.description)
                                              for t in tools)))
    system = instructions
    if working and budget.take(tokens(working)):
        system += f"\n\n{WORKING_HEADER}\n{working}"
        sizes["working"] = tokens(working)
    kept_memories = [m for m in memories if budget.take(tokens(m))]
    sizes["memories"] = sum(tokens(m) for m in kept_memories)
    if kept_memories:
        system += f"\n\n{HEADER}\n" + "\n".join(m if m.startswith("- ") else f"- {m}" for m in kept_memories)
    if summary and budget.take(tokens(summary)):
        system += f"\n\nSummary of this conversation so far:\n{summary}"
        sizes["summary"] = tokens(summary)
    kept: list[Message] = []
    for m in reversed(history):  # newest first, until the budget is spent
        if m.role not in ("user", "assistant") or not m.content.strip():
            continue  # tool rounds of earlier runs are not replayed; their answers are
        if not budget.take(tokens(m.content)):
            break
        kept.append(Message(m.role, m.content))
    kept.reverse()
    while kept and kept[0].role != "user":  # vendors want a conversation to start with the user
        kept.pop(0)
    sizes["history"] = {"messages": len(kept), "tokens": sum(tokens(m.content) for m in kept)}
    sizes["total"] = budget.used
    sizes["counted_with"] = counted_with()
    return system, [*kept, Message("user", task)], sizes
