"""The calling host's own model, through MCP sampling (``sampling/createMessage``), with tool use.

    model = SamplingProvider(ctx.host)      # one per call: the host that called is the one asked

The hub then needs no API key: the host (Claude Desktop, an IDE) runs the model and may show the
person each request. A host that does not offer sampling gets a clear error naming what to change;
a 2026-07-28 host is asked in input-required rounds (the agent tool's bridge does that). Background
work (memory extraction, summaries) has no host to ask, so it is off with this provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp.types as types

from hermes_hub.infra.call import HostChannel
from hermes_hub.infra.models.base import (
    Message,
    ProviderError,
    Reply,
    ToolCall,
    ToolSpec,
    Usage,
    strip_fences,
    with_json_instruction,
)

STOP = {"endTurn": "end", "toolUse": "tool_use", "maxTokens": "max_tokens", "stopSequence": "end"}


class SamplingProvider:
    def __init__(self, host: HostChannel, *, model_hint: str | None = None) -> None:
        self.host = host
        self.model_hint = model_hint
        self.name = "sampling:host"

    def for_host(self, host: HostChannel) -> SamplingProvider:
        """This provider asking ``host``: the one whose call runs the agent."""
        return SamplingProvider(host, model_hint=self.model_hint)

    @property
    def background(self) -> bool:
        return False  # no host to ask outside a call: memory extraction and summaries are off

    async def complete(self, messages: list[Message], *, system: str | None = None, tools: Sequence[ToolSpec] = (),
                       max_tokens: int = 1024, json_output: bool = False, temperature: float | None = None,
                       top_p: float | None = None) -> Reply:
        if self.host.sample is None:
            raise ProviderError(f"agent.provider is 'sampling' but the calling host cannot be asked for a model "
                                f"({self.host.why_not}); use a host that offers sampling, or set agent.provider to "
                                f"anthropic, openai or scripted")
        params = types.CreateMessageRequestParams(
            messages=_messages(messages), max_tokens=max_tokens, temperature=temperature,  # no top_p in MCP
            system_prompt=with_json_instruction(system) if json_output else system,
            model_preferences=types.ModelPreferences(hints=[types.ModelHint(name=self.model_hint)])
            if self.model_hint else None,
            tools=[types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in tools]
            or None,
            tool_choice=types.ToolChoice(mode="auto") if tools else None)
        try:
            result = await self.host.sample(params)
        except Exception as e:  # noqa: BLE001 - the host refused or failed: say so, do not guess an answer
            raise ProviderError(f"the host's model did not answer the sampling request: {e}") from e
        return _reply(result, json_output)

    async def aclose(self) -> None:
        return None


def _messages(messages: list[Message]) -> list[types.SamplingMessage]:
    out: list[types.SamplingMessage] = []
    for m in messages:
        if m.role == "tool":
            block: Any = types.ToolResultContent(type="tool_result", tool_use_id=m.tool_call_id or "",
                                                 content=[types.TextContent(type="text", text=m.content)],
                                                 is_error=m.is_error or None)
            out.append(types.SamplingMessage(role="user", content=[block]))
        elif m.tool_calls:
            blocks: list[Any] = [types.TextContent(type="text", text=m.content)] if m.content else []
            blocks += [types.ToolUseContent(type="tool_use", id=c.id, name=c.name, input=c.arguments)
                       for c in m.tool_calls]
            out.append(types.SamplingMessage(role="assistant", content=blocks))
        else:
            out.append(types.SamplingMessage(role=m.role, content=types.TextContent(type="text", text=m.content)))
    return out


def _reply(result: Any, json_output: bool) -> Reply:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    text = "".join(b.text for b in blocks if isinstance(b, types.TextContent))
    calls = tuple(ToolCall(b.id, b.name, b.input if isinstance(b.input, dict) else {"_unparsed_arguments": b.input})
                  for b in blocks if isinstance(b, types.ToolUseContent))
    stop = "tool_use" if calls else STOP.get(result.stop_reason or "endTurn", "end")
    return Reply(strip_fences(text) if json_output else text, calls, stop, Usage(), result.model or "host")
