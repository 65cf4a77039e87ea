"""What each model request of a run contained, kept in its trace (``hermes-hub traces RUN_ID --prompt``).

    log = PromptLog(masker)
    event["prompt"] = log.request(system, messages, specs)    # when the request is sent
    event["response"] = log.response(reply)                   # when the answer is back

A request is recorded as it was sent, compactly: the instructions (or a note that they are those of the
request before), the messages added since the request before (the first request: all of them), and the
tools offered with the size of each definition. The response keeps the model's text, any reasoning it
returned and its tool calls. Secrets are masked and everything is bounded: a message past
``MESSAGE_CHARS`` is cut, and past ``REQUEST_CHARS`` a request keeps only the role and size of the
rest, so a trace stays small whatever a run read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hermes_hub.infra.masking import Masker
from hermes_hub.infra.models import Message, Reply, ToolSpec

INSTRUCTIONS_CHARS = 20_000
MESSAGE_CHARS = 4_000
REQUEST_CHARS = 60_000
ARGUMENT_CHARS = 1_000
SAME = "(the same as in the request before)"


class PromptLog:
    def __init__(self, masker: Masker) -> None:
        self.masker = masker
        self._system: str | None = None
        self._tools: list[str] | None = None
        self._sent = 0  # messages recorded so far

    def request(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        out: dict[str, Any] = {"instructions": SAME if system == self._system else self._cut(system, INSTRUCTIONS_CHARS),
                               "instructions_chars": len(system)}
        self._system = system
        names = [t.name for t in tools]
        if names == self._tools:
            out["tools"] = SAME
        else:
            out["tools"] = [{"name": t.name, "chars": len(t.description) + len(json.dumps(t.input_schema))}
                            for t in tools]
            self._tools = names
        spent, added = 0, []
        for m in messages[self._sent:]:
            entry: dict[str, Any] = {"role": m.role, "chars": len(m.content)}
            if spent < REQUEST_CHARS:
                entry["content"] = self._cut(m.content, MESSAGE_CHARS)
                spent += len(entry["content"])
            if m.tool_calls:
                entry["tool_calls"] = [c.name for c in m.tool_calls]
            if m.tool_call_id:
                entry["tool_call_id"] = m.tool_call_id
            if m.is_error:
                entry["is_error"] = True
            added.append(entry)
        out["messages_before"], out["messages"] = self._sent, added
        self._sent = len(messages)
        return out

    def response(self, reply: Reply) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self._cut(reply.text, MESSAGE_CHARS), "finish": reply.stop_reason}
        reasoning = getattr(reply, "reasoning", "") or ""
        if reasoning:
            out["reasoning"] = self._cut(reasoning, MESSAGE_CHARS)
        if reply.tool_calls:
            out["tool_calls"] = [{"id": c.id, "name": c.name,
                                  "arguments": self.masker(c.arguments, limit=ARGUMENT_CHARS)
                                  if isinstance(c.arguments, dict) else {}} for c in reply.tool_calls]
        return out

    def _cut(self, text: str, limit: int) -> str:
        masked = self.masker.text(text)
        if len(masked) <= limit:
            return masked
        return masked[:limit] + f" […{len(masked) - limit:,} more characters]"
