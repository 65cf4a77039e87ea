"""Fake vendor APIs at the edge of the world: a Starlette app speaking OpenAI's Chat Completions or
Anthropic's Messages wire format, served by uvicorn on a free port, answering from a queue and recording
every request it received."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support import serve_asgi

JUDGE_OPENING = "You maintain the long-term memory of one person"  # the memory judge's system prompt


@dataclass
class Received:
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class FakeVendor:
    """Answers each request with the next queued ``(status, body, headers)``; records what it received."""

    path: str  # "/v1/chat/completions" or "/v1/messages"
    queue: list[tuple[int, dict[str, Any], dict[str, str], float]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    # answer the hub's memory judge (which asks the same vendor in the background, whenever its queue
    # finds new messages) with "nothing to remember", outside the queue and ``received``
    quiet_judge: bool = False
    judged: int = 0

    def answer(self, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None,
               times: int = 1, delay: float = 0) -> None:
        """Queue an answer; ``delay`` seconds before it is sent (a slow vendor, for timeouts)."""
        self.queue += [(status, body, headers or {}, delay)] * times

    async def _endpoint(self, request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        if self.quiet_judge and JUDGE_OPENING in json.dumps(body):
            self.judged += 1
            nothing = json.dumps({"decisions": []})
            return JSONResponse(anthropic_text(nothing) if self.path.endswith("/messages") else openai_text(nothing))
        self.received.append(Received(body, dict(request.headers)))
        if not self.queue:
            return JSONResponse({"error": {"message": "the fake has no answer queued"}}, status_code=418)
        status, body, headers, delay = self.queue.pop(0)
        await anyio.sleep(delay)  # the vendor thinking, not a wait for a state
        return JSONResponse(body, status_code=status, headers=headers)

    def app(self) -> Starlette:
        return Starlette(routes=[Route(self.path, self._endpoint, methods=["POST"])])


@asynccontextmanager
async def served(vendor: FakeVendor) -> AsyncIterator[str]:
    """Serve ``vendor`` on a free port; yields its base URL (ending in /v1) once it listens."""
    async with serve_app(vendor.app()) as url:
        yield url


@asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    """Serve the ASGI ``app`` (a vendor's API) on a free port; yields its base URL (ending in /v1)."""
    async with serve_asgi(lambda _: app, lifespan="off") as base:
        yield f"{base}/v1"


# Wire-format answers, as each vendor writes them.

def openai_text(text: str, model: str = "qwen-plus", usage: tuple[int, int] = (12, 3)) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def openai_tool_call(call_id: str, name: str, arguments: dict[str, Any], model: str = "qwen-plus") -> dict[str, Any]:
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
    return {"id": "chatcmpl-2", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}}


def openai_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": str(status)}}


def anthropic_text(text: str, model: str = "claude-sonnet-4-5", usage: tuple[int, int] = (12, 3)) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


def anthropic_tool_call(call_id: str, name: str, arguments: dict[str, Any],
                        model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {"id": "msg_2", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 40, "output_tokens": 9}}


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error",
            529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}
