"""OpenAI Chat Completions with tools, through the ``openai`` SDK. ``base_url`` makes it any compatible
server: Ollama (``http://localhost:11434/v1``), vLLM, DeepSeek, Qwen through DashScope's compatible mode,
OpenRouter.

    provider = OpenAIProvider(AgentSection(provider="openai", model="qwen-plus", base_url=...))
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

import openai

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
# OpenAI's reasoning models refuse max_tokens and any temperature but the default
REASONING = re.compile(r"(?:[\w.-]*/)?(?:o[1-9](?![0-9])|gpt-5)")
_STOP = {"stop": "end", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}


class OpenAIProvider(VendorProvider):
    vendor = "openai"
    sdk = openai
    sdk_error = openai.OpenAIError

    def client(self, key: str, base_url: str | None, cfg: AgentSection) -> Any:
        return openai.AsyncOpenAI(api_key=key, base_url=base_url, timeout=cfg.timeout, max_retries=cfg.max_retries)

    async def complete(self, messages: list[Message], *, system: str | None = None, tools: Sequence[ToolSpec] = (),
                       max_tokens: int = 1024, json_output: bool = False, temperature: float | None = None,
                       top_p: float | None = None) -> Reply:
        params: dict[str, Any] = {"model": self.model,
                                  "messages": wire_messages(with_json_instruction(system) if json_output else system,
                                                            messages)}
        if REASONING.match(self.model):  # o1/o3/o4/gpt-5: max_completion_tokens, and no sampling settings
            params["max_completion_tokens"] = max_tokens
        else:
            params["max_tokens"] = max_tokens  # what Ollama, vLLM and the other compatible servers read
            params |= {k: v for k, v in (("temperature", temperature), ("top_p", top_p)) if v is not None}
        if tools:
            params["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                                 "parameters": t.input_schema}} for t in tools]
        if json_output:
            params["response_format"] = {"type": "json_object"}
        return await self.send(self._client.chat.completions.create, params, lambda r: _reply(r, self.model, json_output), len(tools))


def wire_messages(system: str | None, messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in Chat Completions' shape: the system prompt first, tool results as ``tool`` turns."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "tool":
            # Chat Completions has no error flag on a tool result: say it in the text.
            out.append({"role": "tool", "tool_call_id": m.tool_call_id,
                        "content": f"ERROR: {m.content}" if m.is_error else m.content})
        elif m.role == "assistant" and m.tool_calls:
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                for c in m.tool_calls]})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _reply(response: Any, model: str, json_output: bool) -> Reply:
    if not response.choices:
        raise ValueError("the answer has no 'choices'")
    choice = response.choices[0]
    calls = tuple(ToolCall(c.id, c.function.name, _arguments(c.function.arguments))
                  for c in (choice.message.tool_calls or ()) if getattr(c, "function", None))
    stop = "tool_use" if calls else _STOP.get(choice.finish_reason or "stop", "end")
    text = choice.message.content or ""
    usage = response.usage
    return Reply(strip_fences(text) if json_output else text, calls, stop,
                 Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else Usage(),
                 response.model or model, reasoning=_reasoning(choice.message))


def _reasoning(message: Any) -> str:
    """What OpenAI-compatible thinking models (DeepSeek, Qwen, vLLM's reasoning parsers) send beside the answer."""
    extra = getattr(message, "model_extra", None) or {}
    found = getattr(message, "reasoning_content", None) or extra.get("reasoning_content") or extra.get("reasoning")
    return found if isinstance(found, str) else ""


def _arguments(raw: str | None) -> dict:
    """A tool call's arguments; text that is not a JSON object is kept under ``_unparsed_arguments`` so the
    loop can tell the model its call was malformed instead of calling the tool with nothing."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_unparsed_arguments": raw}
