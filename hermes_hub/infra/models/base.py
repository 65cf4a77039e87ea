"""The vocabulary every model provider speaks: messages in, one reply out.

    reply = await provider.complete([Message("user", "hi")], system="Be brief.")
    reply.text, reply.tool_calls, reply.stop_reason, reply.usage

A provider is one async method. ``max_tokens``, ``temperature`` and ``top_p`` are sent in each vendor's
own terms (``None``: not sent, the vendor's default applies). Vendors' wire formats stay inside their modules (``anthropic.py``,
``openai.py``); the scripted provider answers from a file, for tests and the demo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hermes_hub.infra.errors import HubError


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its public name, what it does, and a JSON Schema of its arguments."""

    name: str
    description: str
    input_schema: dict


@dataclass(frozen=True)
class ToolCall:
    """The model asks for ``name(**arguments)``; ``id`` ties the result (a ``tool`` message) back to it."""

    id: str
    name: str
    arguments: dict


@dataclass(frozen=True)
class Message:
    """One turn: ``user``, ``assistant`` (maybe with tool calls) or ``tool`` (a result). The system prompt
    is not a message: it is passed to ``complete`` separately, as both vendors take it apart."""

    role: str  # "user" | "assistant" | "tool"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # role "tool": the ToolCall.id this answers
    is_error: bool = False  # role "tool": the call failed; the text says why


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: tuple[ToolCall, ...]
    stop_reason: str  # "end" | "tool_use" | "max_tokens" (cut by the length limit)
    usage: Usage
    model: str  # the model that answered, as the vendor names it
    reasoning: str = ""  # reasoning text the model returned beside its answer (kept in the run's trace)


class ProviderError(HubError):
    """A model request failed. The message says what to fix; ``retryable`` says whether trying again later
    can help (rate limits, overload, server errors, timeouts: already retried by the SDK before this)."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status  # the vendor's HTTP status, when there was one


class Provider(Protocol):
    """A model. ``name`` is ``"<provider>:<model>"``, e.g. ``"openai:qwen-plus"`` or ``"scripted:demo.json"``.
    Whoever makes one closes it (``aclose``) in the event loop that used it."""

    name: str

    async def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 1024,
        json_output: bool = False,
        temperature: float | None = None,
        top_p: float | None = None,
    ) -> Reply: ...

    async def aclose(self) -> None:
        """Release connections. Providers are also async context managers: ``async with make_provider(c) as p``."""


JSON_INSTRUCTION = "Answer with one JSON object and nothing else: no prose, no code fences."


def with_json_instruction(system: str | None) -> str:
    """``system`` plus the instruction to answer in JSON (OpenAI's JSON mode also needs the word in the prompt)."""
    return f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION


def strip_fences(text: str) -> str:
    """A JSON answer without the Markdown code fence some models wrap it in anyway."""
    t = text.strip()
    if t.startswith("```") and t.endswith("```"):
        t = t[3:-3]
        t = t[4:] if t.startswith("json") else t
    return t.strip()
