"""tools/call to a stdio child as JSON lines written and read beside the SDK's client session.

    lane = StdioLane(process.stdin.send)          # one per child (``transports._stdio``)
    if lane.pending and await lane.take(line): ...  # the stdout pump: a lane's answer never reaches the SDK
    result = await lane.call("echo", {"text": "hi"}, meta=None, on_progress=deadline.on_progress(None))

A plain call to a handshake-era server over stdio (``Forwarding._call``: no spans exported, no task)
goes out as one line with an id of the lane's own (``"hermes~7"``, which the SDK's integer ids never
are) and that id as its progress token; the stdout pump hands the line that answers it, and each
progress notification for it, straight back here. Everything else (the handshake, listings, the
server's own requests during a call, which ``Relay`` matches as before) still goes through the SDK.

Measured (bench/README.md): the SDK session's request path (a request model, a dispatcher task, two
memory-stream hops, ~10 cancel scopes) was about a third of the hub's CPU per proxied call. What the
lane keeps of it: the result is validated as the SDK validates it (``CallToolResult``, then the tool's
output schema by the session's own ``validate_tool_result``), an error answer is an ``MCPError``, a
call cancelled by its deadline or its host sends ``notifications/cancelled``, and a child that exits
fails the calls in flight with ``CONNECTION_CLOSED``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError

TAG = "hermes~"
_TAG = TAG.encode()
_ID = re.compile(rb'"id"\s*:\s*"(' + re.escape(_TAG) + rb'[0-9]+)"')
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
Send = Callable[[bytes], Awaitable[None]]


@dataclass(eq=False)
class _Pending:
    on_progress: ProgressFn | None
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: dict[str, Any] | None = None


class StdioLane:
    def __init__(self, send: Send) -> None:
        self._send = send
        self.pending: dict[str, _Pending] = {}
        self._next = 0
        self.gone: str | None = None  # why no call can reach the child any more

    async def call(self, name: str, arguments: dict[str, Any] | None, *, meta: dict[str, Any] | None,
                   on_progress: ProgressFn | None) -> dict[str, Any]:
        """The ``result`` object of the child's answer; ``MCPError`` for an error answer or a lost child."""
        if self.gone is not None:
            raise MCPError(types.CONNECTION_CLOSED, self.gone)
        self._next += 1
        rid = f"{TAG}{self._next}"
        params: dict[str, Any] = {"name": name, "_meta": {**(meta or {}), "progressToken": rid}}
        if arguments is not None:
            params["arguments"] = arguments
        try:
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params},
                              allow_nan=False) + "\n"
        except ValueError as e:  # NaN or Infinity: not JSON, whoever wrote the arguments
            raise MCPError(types.INVALID_PARAMS, f"the arguments are not JSON: {e}") from e
        waiting = self.pending[rid] = _Pending(on_progress)
        try:
            try:
                await self._send(line.encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as e:  # the child's stdin is gone
                self.pending.pop(rid, None)
                raise MCPError(types.CONNECTION_CLOSED, self.gone or "the server's stdin is closed") from e
            await waiting.done.wait()
        except BaseException:
            if not waiting.done.is_set() and self.gone is None:  # cancelled: tell the child, as the SDK does
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    await self._notify_cancelled(rid)
            raise
        finally:
            self.pending.pop(rid, None)
        answer = waiting.answer or {}
        if "result" in answer and isinstance(answer["result"], dict):
            return answer["result"]
        error = answer.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            raise MCPError(error["code"], error["message"], error.get("data"))
        raise MCPError(types.CONNECTION_CLOSED if self.gone else types.INTERNAL_ERROR,
                       self.gone or "the server's answer to tools/call was not a JSON-RPC result or error")

    async def take(self, line: bytes) -> bool:
        """True when ``line`` (from the child's stdout) was for a call of this lane and is handled; a
        progress notification's callback is awaited here, in the pump, as the SDK's dispatcher does."""
        if _TAG not in line:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict):
            return False
        waiting = self.pending.get(message.get("id")) if isinstance(message.get("id"), str) else None
        if waiting is not None and "method" not in message and ("result" in message or "error" in message):
            waiting.answer = message
            waiting.done.set()
            return True
        if message.get("method") == "notifications/progress" and isinstance(params := message.get("params"), dict):
            token = params.get("progressToken")
            waiting = self.pending.get(token) if isinstance(token, str) else None
            if waiting is not None:
                if waiting.on_progress is not None and isinstance(params.get("progress"), int | float):
                    total, said = params.get("total"), params.get("message")
                    await waiting.on_progress(params["progress"], total if isinstance(total, int | float) else None,
                                              said if isinstance(said, str) else None)
                return True
        return False

    def dropped(self, prefix: bytes, why: str) -> None:
        """A message too big to keep came in; if its start names a lane call, that call fails with ``why``."""
        found = _ID.search(prefix[:512])
        waiting = self.pending.get(found.group(1).decode()) if found else None
        if waiting is not None:
            waiting.answer = {"error": {"code": types.INTERNAL_ERROR, "message": why}}
            waiting.done.set()

    def close(self, why: str) -> None:
        """The child is gone: every call in flight fails with ``why``, and later ones at once."""
        self.gone = why
        for waiting in self.pending.values():
            waiting.done.set()

    async def _notify_cancelled(self, rid: str) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "the hub's caller cancelled the call, or its deadline passed"}}
        try:
            await self._send((json.dumps(note) + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
