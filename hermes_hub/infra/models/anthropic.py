"""Anthropic's Messages API with tool use, through the ``anthropic`` SDK.

    provider = AnthropicProvider(AgentSection(provider="anthropic", model="claude-sonnet-4-5"))

Tool calls arrive as ``tool_use`` blocks; our ``tool`` messages go back as ``tool_result`` blocks inside a
user turn. The API wants turns to alternate, so consecutive results (and a user text after them) share
one user turn.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import anthropic

from hermes_hub.infra.config import AgentSection
from hermes_hub.infra.models.base import (
    Message,
    Reply,
    ToolCall,
    ToolSpec,
    Usage,
    strip_fences,
    with_json_instruction,
)
from hermes_hub.infra.models.vendor import VendorProvider

log = logging.getLogger(__name__)
CLAUDE = re.compile(r"claude-(?:(?:opus|sonnet|haiku)-(?P<major>[0-9])(?:-(?P<minor>[0-9])(?![0-9]))?"
                    r"|(?P<old>[0-9])(?:-[0-9])?-(?:opus|sonnet|haiku))")
_STOP = {"end_turn": "end", "stop_sequence": "end", "tool_use": "tool_use", "max_tokens": "max_tokens",
         "model_context_window_exceeded": "max_tokens"}


class AnthropicProvider(VendorProvider):
    vendor = "anthropic"
    sdk = anthropic
    sdk_error = anthropic.AnthropicError

    def client(self, key: str, base_url: str | None, cfg: AgentSection) -> Any:
        return anthropic.AsyncAnthropic(api_key=key, base_url=base_url, timeout=cfg.timeout, max_retries=cfg.max_retries)

    async def complete(self, messages: list[Message], *, system: str | None = None, tools: Sequence[ToolSpec] = (),
                       max_tokens: int = 1024, json_output: bool = False, temperature: float | None = None,
                       top_p: float | None = None) -> Reply:
        system = with_json_instruction(system) if json_output else system
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": wire_messages(messages)}
        if samples(self.model):  # the SDK no longer names them: they go in the body as the API reads them
            # Claude 4.x takes one of the two: a top_p someone set wins over the default temperature
            chosen = {"top_p": top_p} if top_p is not None else \
                {"temperature": min(temperature, 1.0)} if temperature is not None else {}  # the API's range: 0-1
            if chosen:
                params["extra_body"] = chosen
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                               for t in tools]
        return await self.send(self._client.messages.create, params, lambda r: _reply(r, self.model, json_output), len(tools))


def samples(model: str) -> bool:
    """Whether ``model`` takes temperature and top_p: Claude before Opus 4.7 and generation 5, which refuse
    them ("temperature is deprecated for this model"); a name not read here gets the API's default."""
    m = CLAUDE.search(model.lower())
    return m is not None and (int(m["major"] or m["old"]), int(m["minor"] or 0)) < (4, 7)


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as Messages API turns of content blocks, consecutive same-role turns merged."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = "user" if m.role == "tool" else m.role
        blocks = _blocks(m)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
        return [block | {"is_error": True}] if m.is_error else [block]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
    return blocks


def _reply(response: Any, model: str, json_output: bool) -> Reply:
    if not isinstance(response.content, list) or response.usage is None:
        raise ValueError("the answer has no 'content' or 'usage'")
    text = "".join(b.text for b in response.content if b.type == "text")
    calls = tuple(ToolCall(b.id, b.name, dict(b.input or {})) for b in response.content if b.type == "tool_use")
    stop = "tool_use" if calls else _STOP.get(response.stop_reason or "end_turn", "end")
    u = response.usage
    # Cached prompt tokens are counted apart by the vendor; the budget wants everything the model read.
    read = (u.input_tokens or 0) + (getattr(u, "cache_creation_input_tokens", 0) or 0) + \
        (getattr(u, "cache_read_input_tokens", 0) or 0)
    thinking = "".join(getattr(b, "thinking", "") or "" for b in response.content if b.type == "thinking")
    return Reply(strip_fences(text) if json_output else text, calls, stop, Usage(read, u.output_tokens or 0),
                 response.model or model, reasoning=thinking)
