"""A scripted model at the edge of the world, served in each vendor's wire format, for the hosts the
interop tests run headless (tests/interop/test_hosts_live.py).

One app answers Anthropic Messages (``/v1/messages``, SSE), OpenAI Chat Completions
(``/v1/chat/completions``, ``data:`` chunks and ``[DONE]``), OpenAI Responses (``/v1/responses``, the
events Codex reads) and Gemini (``/v1beta/models/M:streamGenerateContent?alt=sse`` and
``:generateContent``). The script, for every request:

- a conversation naming a queued marker, offering that tool (under any prefix the host gives it) and
  holding no tool result yet: call the tool with the queued arguments;
- a conversation holding a tool result: answer with text that quotes it;
- anything else (titles, classifiers, quota checks, a host's warm-up): a short plain text.

    model = ScriptedModel()
    model.queue("ask-1", "hermes_memory_remember", {"text": "..."})
    async with serve_model(model) as base: ...           # base URL, no path
    [req] = model.asked("ask-1"); req.tools, req.results   # what the host offered and sent back
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support import serve_asgi


@dataclass
class Asked:
    """One request a host sent: its wire format, body, the tool names offered and the tool results in it."""

    wire: str  # "anthropic", "chat", "responses", "gemini"
    body: dict[str, Any]
    tools: list[str]
    results: list[str]
    streamed: bool  # answered as a stream of events (SSE), as each host asks for its turns

    @property
    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class Turn:
    """What the model says: text, or a call of ``tool`` (the host's own name for it) with ``arguments``."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScriptedModel:
    script: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # marker -> (tool, arguments)
    received: list[Asked] = field(default_factory=list)

    def queue(self, marker: str, tool: str, arguments: dict[str, Any]) -> None:
        """A prompt naming ``marker`` gets a call of ``tool`` (matched by suffix: hosts prefix MCP tools)."""
        self.script[marker] = (tool, arguments)

    def asked(self, marker: str) -> list[Asked]:
        """The requests whose conversation named ``marker``."""
        return [a for a in self.received if marker in a.text]

    def turn(self, asked: Asked) -> Turn:
        if asked.results:
            return Turn(text="The tool said: " + " | ".join(asked.results))
        for marker, (tool, arguments) in self.script.items():
            offered = [t for t in asked.tools if t == tool or t.endswith(tool)]
            if marker in asked.text and offered:
                return Turn(tool=offered[0], arguments=arguments)
        return Turn(text="OK.")

    # the app

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/messages/count_tokens", lambda r: JSONResponse({"input_tokens": 100}), methods=["POST"]),
            Route("/v1/messages", self._anthropic, methods=["POST"]),
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route("/v1beta/models/{call:path}", self._gemini, methods=["POST"]),
            Route("/v1/models", lambda r: JSONResponse({"object": "list", "data": [
                {"id": "scripted", "object": "model", "created": 1700000000, "owned_by": "hermes"}]})),
        ])

    def _record(self, wire: str, body: dict[str, Any], tools: list[str], results: list[str],
                streamed: bool | None = None) -> Turn:
        asked = Asked(wire, body, tools, results, bool(body.get("stream")) if streamed is None else streamed)
        self.received.append(asked)
        return self.turn(asked)

    async def _anthropic(self, request: Request) -> Response:
        body = await request.json()
        results = [_text_of(block.get("content")) for m in body.get("messages", []) if isinstance(m.get("content"), list)
                   for block in m["content"] if block.get("type") == "tool_result"]
        turn = self._record("anthropic", body, [t.get("name", "") for t in body.get("tools") or []], results)
        model = body.get("model", "claude")
        if not body.get("stream"):
            content = ([{"type": "tool_use", "id": _id("toolu"), "name": turn.tool, "input": turn.arguments}]
                       if turn.tool else [{"type": "text", "text": turn.text}])
            return JSONResponse({"id": _id("msg"), "type": "message", "role": "assistant", "model": model,
                                 "content": content, "stop_reason": "tool_use" if turn.tool else "end_turn",
                                 "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})
        return _sse(_anthropic_events(turn, model))

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        results = [_text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
        tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
        turn = self._record("chat", body, tools, results)
        model = body.get("model", "scripted")
        call = {"id": _id("call"), "type": "function",
                "function": {"name": turn.tool, "arguments": json.dumps(turn.arguments)}}
        if not body.get("stream"):
            message = ({"role": "assistant", "content": None, "tool_calls": [call]} if turn.tool
                       else {"role": "assistant", "content": turn.text})
            return JSONResponse({"id": _id("chatcmpl"), "object": "chat.completion", "created": 1700000000,
                                 "model": model, "choices": [{"index": 0, "message": message,
                                                              "finish_reason": "tool_calls" if turn.tool else "stop"}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        return _sse(_chat_events(turn, model, call), done=True)

    async def _responses(self, request: Request) -> Response:
        body = await request.json()
        items = body.get("input") if isinstance(body.get("input"), list) else []
        results = [_text_of(i.get("output")) for i in items if i.get("type") == "function_call_output"]
        # Codex offers each MCP server's tools as a namespace ("mcp__hermes") of functions; a call names both
        spaces = {f"{t['name']}__{f['name']}": (t["name"], f["name"]) for t in body.get("tools") or []
                  if t.get("type") == "namespace" for f in t.get("tools") or []}
        tools = [t.get("name", "") for t in body.get("tools") or [] if t.get("type") == "function"] + list(spaces)
        turn = self._record("responses", body, tools, results, streamed=True)  # Codex streams; so does the answer
        return _sse(_responses_events(turn, body.get("model", "scripted"), spaces.get(turn.tool or "")))

    async def _gemini(self, request: Request) -> Response:
        body = await request.json()
        call = request.path_params["call"]
        parts = [p for c in body.get("contents", []) for p in c.get("parts", [])]
        results = [json.dumps(p["functionResponse"].get("response"), ensure_ascii=False) for p in parts
                   if "functionResponse" in p]
        tools = [d.get("name", "") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
        if call.endswith(":countTokens"):
            return JSONResponse({"totalTokens": 100})
        turn = self._record("gemini", body, tools, results, streamed=call.endswith(":streamGenerateContent"))
        part = {"functionCall": {"name": turn.tool, "args": turn.arguments}} if turn.tool else {"text": turn.text}
        answer = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                  "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                  "modelVersion": call.split(":")[0]}
        if call.endswith(":streamGenerateContent"):
            return _sse(iter([answer]))
        return JSONResponse(answer)


@asynccontextmanager
async def serve_model(model: ScriptedModel) -> AsyncIterator[str]:
    """Serve ``model`` on a free loopback port; yields its base URL (``http://127.0.0.1:PORT``)."""
    async with serve_asgi(lambda _: model.app(), lifespan="off") as base:
        yield base


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _text_of(content: Any) -> str:
    """A tool result's text, whether a string, a list of text blocks or anything JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return json.dumps(content, ensure_ascii=False)


def _sse(events: Iterator[dict[str, Any]], done: bool = False) -> StreamingResponse:
    def lines() -> Iterator[str]:
        for event in events:
            kind = f"event: {event['type']}\n" if isinstance(event.get("type"), str) and not done else ""
            yield f"{kind}data: {json.dumps(event, ensure_ascii=False)}\n\n"
        if done:
            yield "data: [DONE]\n\n"

    return StreamingResponse(lines(), media_type="text/event-stream")


def _anthropic_events(turn: Turn, model: str) -> Iterator[dict[str, Any]]:
    yield {"type": "message_start", "message": {
        "id": _id("msg"), "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    if turn.tool:
        yield {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": _id("toolu"), "name": turn.tool, "input": {}}}
        yield {"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": json.dumps(turn.arguments)}}
    else:
        yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        yield {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": turn.text}}
    yield {"type": "content_block_stop", "index": 0}
    yield {"type": "message_delta", "delta": {"stop_reason": "tool_use" if turn.tool else "end_turn",
                                              "stop_sequence": None}, "usage": {"output_tokens": 5}}
    yield {"type": "message_stop"}


def _chat_events(turn: Turn, model: str, call: dict[str, Any]) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if turn.tool:
        yield chunk({"tool_calls": [{"index": 0, **call}]})
    else:
        yield chunk({"content": turn.text})
    yield chunk({}, "tool_calls" if turn.tool else "stop")
    yield {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
           "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _responses_events(turn: Turn, model: str, space: tuple[str, str] | None) -> Iterator[dict[str, Any]]:
    response = {"id": _id("resp"), "object": "response", "created_at": 1700000000, "model": model,
                "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": response}
    if turn.tool:
        item = {"type": "function_call", "id": _id("fc"), "call_id": _id("call"), "name": turn.tool,
                "arguments": "", "status": "in_progress"}
        if space:
            item.update(namespace=space[0], name=space[1])
        yield {"type": "response.output_item.added", "output_index": 0, "item": item}
        arguments = json.dumps(turn.arguments)
        yield {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0,
               "delta": arguments}
        done = {**item, "arguments": arguments, "status": "completed"}
    else:
        item = {"type": "message", "id": _id("msg"), "role": "assistant", "status": "in_progress", "content": []}
        yield {"type": "response.output_item.added", "output_index": 0, "item": item}
        yield {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
               "delta": turn.text}
        done = {**item, "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
    yield {"type": "response.output_item.done", "output_index": 0, "item": done}
    yield {"type": "response.completed", "response": {
        **response, "status": "completed", "output": [done],
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}}
