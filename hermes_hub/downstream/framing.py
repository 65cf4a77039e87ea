"""A stdio child's stdout cut into JSON-RPC lines, none kept past ``hub.max_message_bytes``.

    async for item in read_lines(process.stdout, limit):   # ``transports._stdio``'s stdout pump
        if isinstance(item, Dropped): ...                   # the call it answered fails (``InFlight``)

A line is kept only while it fits the limit. Past it, what was kept is let go but for its first
``HEAD`` bytes, and the rest is read and thrown away as it streams, up to the next newline, so one
message costs the hub at most ``limit`` bytes however big it is (issue 30: a 200 MB answer took the
hub from 106 MB to 1,079 MB). ``Dropped`` comes twice: when the line passes the limit (its head is
known: the id is read from there when it comes first, as the SDK's servers write it) and when the
line ends (its last ``TAIL`` bytes are known: the id of a server that writes it last). A line that
goes on for ``endless_after(limit)`` bytes without a newline ends the connection: nothing after it
could be read, so the child is restarted.

``InFlight`` keeps the ids of the SDK session's requests waiting for an answer, in the order they
were written, so that the answer dropped fails its own call with an error a person can act on, or
the oldest call in flight when the id cannot be read.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import ByteReceiveStream
from mcp.shared.message import SessionMessage

HEAD = 4096  # bytes kept of a dropped line's start: the envelope's id is there when it comes first
TAIL = 512  # bytes kept of its end: the id of a server that writes it last
CHUNK = 1 << 16
_ID = rb'"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.){0,200}")'
_HEAD_ID = re.compile(rb'^\s*\{(?:\s*"(?:jsonrpc|id)"\s*:\s*(?:"[^"]*"|-?[0-9]+)\s*,?)*?\s*' + _ID)
_TAIL_ID = re.compile(rb',\s*' + _ID + rb'\s*\}\s*$')


_limit = [4_000_000]  # the hub's ``hub.max_message_bytes`` (``HubSection.message_bytes``), set by ``Pool``


def set_message_limit(limit: int) -> None:
    _limit[0] = limit


def message_limit() -> int:
    """The bytes one message from a downstream server may have (a connection reads it when it starts)."""
    return _limit[0]


def endless_after(limit: int) -> int:
    """Bytes of one line past which it is taken for endless and the child restarted."""
    return max(64 * limit, 256 << 20)


def too_big(limit: int) -> str:
    """Why a call failed, after the ``server 'NAME': `` every downstream error starts with."""
    return (f"answered with a message of more than {limit:,} bytes (hub.max_message_bytes); the answer was "
            "dropped. Make the tool return less (a resource link, say), or raise hub.max_message_bytes in hub.json")


@dataclass
class Dropped:
    """A line over the limit: ``head`` its first bytes; at its end (``ended``) also ``tail`` and ``size``."""

    head: bytes
    size: int
    ended: bool = False
    tail: bytes = b""
    endless: bool = False

    def id(self) -> Any:
        """The JSON-RPC id of the envelope, read from its head or its tail; None if neither shows it."""
        found = _HEAD_ID.match(self.head) or (_TAIL_ID.search(self.tail) if self.ended else None)
        if found is None:
            return None
        try:
            return json.loads(found.group(1))
        except ValueError:
            return None


async def read_lines(stream: ByteReceiveStream | None, limit: int) -> AsyncIterator[bytes | Dropped]:
    """Each non-blank line of ``stream`` that fits ``limit``, else its ``Dropped`` (twice, see above);
    time linear in the bytes read, memory at most ``limit`` plus one chunk."""
    assert stream is not None
    endless = endless_after(limit)
    parts: list[bytes] = []
    kept = 0
    drop: Dropped | None = None  # the line being thrown away
    last = b""
    while True:
        try:
            chunk = await stream.receive(CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            break
        start = 0
        while start < len(chunk) or start == 0:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end == -1 else chunk[start:end]
            if drop is None and kept + len(piece) > limit:
                head = (b"".join(parts) + piece[:HEAD])[:HEAD]
                drop = Dropped(head, kept)
                parts, kept = [], 0
                yield drop
            if drop is not None:
                drop.size += len(piece)
                last = (last + piece[-TAIL:])[-TAIL:]
                if end == -1 and drop.size > endless:
                    drop.endless = True
                    yield drop
                    return
            else:
                parts.append(piece)
                kept += len(piece)
            if end == -1:
                break
            start = end + 1
            if drop is not None:
                yield Dropped(drop.head, drop.size, ended=True, tail=last)
                drop, last = None, b""
            else:
                line = b"".join(parts)
                parts, kept = [], 0
                if line.strip():
                    yield line
    if drop is not None:
        yield Dropped(drop.head, drop.size, ended=True, tail=last)
    elif (line := b"".join(parts)).strip():
        yield line


class InFlight:
    """The SDK session's requests to a child still waiting for an answer, oldest first."""

    def __init__(self) -> None:
        self._ids: dict[Any, None] = {}

    def sent(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids[_key(message.id)] = None
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            rid = (message.params or {}).get("requestId")
            if isinstance(rid, int | str):
                self._ids.pop(_key(rid), None)

    def answered(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and isinstance(message.id, int | str):
            self._ids.pop(_key(message.id), None)

    def take(self, rid: Any) -> bool:
        """True (and forgotten) if ``rid`` is a request in flight."""
        if not isinstance(rid, int | str) or _key(rid) not in self._ids:
            return False
        del self._ids[_key(rid)]
        return True

    def oldest(self) -> Any:
        """The oldest request in flight (forgotten), or None."""
        for key in self._ids:
            del self._ids[key]
            return key[1]
        return None

    @staticmethod
    def failure(rid: Any, why: str) -> SessionMessage:
        """The error answer that ends request ``rid`` in the SDK session."""
        error = types.ErrorData(code=types.INTERNAL_ERROR, message=why)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid, error=error))


def _key(rid: int | str) -> tuple[type, int | str]:
    return type(rid), rid  # 1 and "1" are different requests
