"""tools/call to a stdio child as JSON lines written and read beside the SDK's client session.

    lane = StdioLane(process.stdin.send)          # one per child (``transports._stdio``)
    if lane.pending and await lane.take(line): ...  # the stdout pump: a lane's answer never reaches the SDK
    result = await lane.call("echo", {"text": "hi"}, meta=None, on_progress=deadline.on_progress(None))

A plain call to a handshake-era server over stdio (``Forwarding._call``: no spans exported, no task)
goes out as one line with an id of the lane's own (``"hermes~7"``, which the SDK's integer ids never
are) and that id as its progress token; the stdout pump hands the line that answers it, each progress
notification for it and, while lane calls are in flight, the server's log messages straight back here.
Everything else (the handshake, listings, the server's own requests during a call, which ``Relay``
matches as before) still goes through the SDK.

The calling task delivers what came for its call in the child's order: progress and log lines first,
then the answer, so a log line written before an answer is matched (by ``Relay``) while its call is
still in flight. A host slow to take a progress or log message slows that call only, never the pump,
and a delivery that fails is logged and skipped, as the SDK's dispatcher does.

Measured (bench/README.md): the SDK session's request path (a request model, a dispatcher task, two
memory-stream hops, ~10 cancel scopes) was about a third of the hub's CPU per proxied call. What the
lane keeps of it: lines are parsed as strictly as the SDK parses them (``pydantic_core``: a lone
surrogate is refused), the result is validated as the SDK validates it (``CallToolResult``, then the
tool's output schema by the session's own ``validate_tool_result``), an error answer is an
``MCPError``, a call cancelled by its deadline or its host sends ``notifications/cancelled``, and a
child that exits or closes its stdout fails the calls in flight with ``CONNECTION_CLOSED``.
"""

from __future__ import annotations

import json
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
import pydantic_core
from mcp import MCPError
from pydantic import ValidationError

log = logging.getLogger("hermes_hub.downstream")
TAG = "hermes~"
_TAG = TAG.encode()
_ID = re.compile(rb'"id"\s*:\s*"(' + re.escape(_TAG) + rb'[0-9]+)"')
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
LogFn = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]
Send = Callable[[bytes], Awaitable[None]]


@dataclass(eq=False)
class _Pending:
    on_progress: ProgressFn | None
    events: deque[tuple[str, Any]] = field(default_factory=deque)  # ("progress", args) | ("log", params)
    wake: anyio.Event = field(default_factory=anyio.Event)
    answer: dict[str, Any] | None = None
    done: bool = False

    def put(self, kind: str, value: Any) -> None:
        self.events.append((kind, value))
        self.wake.set()

    def finish(self, answer: dict[str, Any] | None) -> None:
        if not self.done:  # the first answer counts, as in the SDK
            self.answer, self.done = answer, True
        self.wake.set()


class StdioLane:
    def __init__(self, send: Send) -> None:
        self._send = send
        self.pending: dict[str, _Pending] = {}
        self.on_log: LogFn | None = None  # the connection's log relay, once it is READY
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
        except (ValueError, TypeError) as e:  # NaN, Infinity or a Python object: not JSON, whoever wrote them
            raise MCPError(types.INVALID_PARAMS, f"the arguments are not JSON: {e}") from e
        waiting = self.pending[rid] = _Pending(on_progress)
        written = False
        try:
            try:
                await self._send(line.encode())
                written = True
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as e:  # the child's stdin is gone
                raise MCPError(types.CONNECTION_CLOSED, self.gone or "the server's stdin is closed") from e
            while True:
                await waiting.wake.wait()
                while waiting.events:
                    await self._deliver(waiting, *waiting.events.popleft())
                if waiting.done:
                    break
                waiting.wake = anyio.Event()  # no await since the queue was emptied: nothing put is missed
        except BaseException:
            if written and not waiting.done and self.gone is None:  # cancelled: tell the child, as the SDK does
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
        """True when ``line`` (from the child's stdout) is the lane's to deliver: an answer or progress of
        one of its calls, or a log message while they are in flight (handed to the oldest of them)."""
        if _TAG not in line and not (self.on_log is not None and b"notifications/message" in line):
            return False
        try:
            message = pydantic_core.from_json(line)
        except ValueError:  # not JSON the SDK would take either: if it answers a lane call, that call fails now
            found = _ID.search(line)
            if found and (waiting := self.pending.get(found.group(1).decode())) is not None:
                waiting.finish({"error": {"code": types.PARSE_ERROR, "message": "the server's answer was not valid "
                                          "JSON (e.g. a lone surrogate in a string)"}})
                return True
            return False
        if not isinstance(message, dict):
            return False
        method = message.get("method")
        if method is None:
            return self.claim(message)
        params = message.get("params")
        if method == "notifications/progress" and isinstance(params, dict):
            token = params.get("progressToken")
            waiting = self.pending.get(token) if isinstance(token, str) else None
            if waiting is not None:
                if (args := _progress(params)) is not None:
                    waiting.put("progress", args)
                return True
        elif method == "notifications/message" and self.on_log is not None and self.pending:
            try:
                said = types.LoggingMessageNotificationParams.model_validate(params)
            except ValidationError:
                return False  # the SDK says what is wrong with it
            next(iter(self.pending.values())).put("log", said)
            return True
        return False

    def claim(self, message: dict[str, Any]) -> bool:
        """Take the answer ``message`` (a dict, or the SDK's parsed response) if it is one of the lane's."""
        rid = message.get("id")
        waiting = self.pending.get(rid) if isinstance(rid, str) else None
        if waiting is None or not ("result" in message or "error" in message):
            return False
        waiting.finish(message)
        return True

    def fail(self, rid: object, why: str) -> bool:
        """Call ``rid`` (if it is one of the lane's, still waiting) fails with ``why``."""
        waiting = self.pending.get(rid) if isinstance(rid, str) else None
        if waiting is None or waiting.done:
            return False
        waiting.finish({"error": {"code": types.INTERNAL_ERROR, "message": why}})
        return True

    def fail_oldest(self, why: str) -> bool:
        """The oldest call still waiting fails with ``why`` (an answer too big to read the id of came)."""
        return any(self.fail(rid, why) for rid in list(self.pending))

    def close(self, why: str) -> None:
        """The child is gone: every call in flight fails with ``why``, and later ones at once."""
        self.gone = self.gone or why
        for waiting in self.pending.values():
            waiting.finish(None)

    async def _deliver(self, waiting: _Pending, kind: str, value: Any) -> None:
        try:
            if kind == "progress" and waiting.on_progress is not None:
                await waiting.on_progress(*value)
            elif kind == "log" and self.on_log is not None:
                await self.on_log(value)
        except Exception:  # noqa: BLE001 - a host that cannot take it never ends the call
            log.exception("could not deliver a server's %s message during a tool call", kind)

    async def _notify_cancelled(self, rid: str) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "the hub's caller cancelled the call, or its deadline passed"}}
        try:
            await self._send((json.dumps(note) + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass


def _progress(params: dict[str, Any]) -> tuple[float, float | None, str | None] | None:
    """(progress, total, message) as the SDK passes them on; None for a notification it would refuse."""
    value, total, said = params.get("progress"), params.get("total"), params.get("message")
    if not _number(value) or total is not None and not _number(total) or said is not None and not isinstance(said, str):
        return None
    return float(value), None if total is None else float(total), said


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
