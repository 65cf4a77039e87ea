"""Every place the hub relies on the MCP SDK's private parts or unpromised behaviour, in one file,
so that an SDK upgrade means reading this file (and re-running the tests each touch names).

Checked against mcp 2.3.0 (mcp-types 2.3.0; ``CHECKED_AGAINST``; ``tests/test_sdk_touches.py`` fails
on another minor version, and on a private SDK name used anywhere else in the hub). The touches:

1. ``has_modern_envelope``: the SDK runner's private era test, for the stdio call lane.
2. ``enter_client``: ``Client.__aenter__`` done again with the hub's own negotiation (downstream eras).
3. ``host_connection``: a server session's private ``_connection``, one per host connection.
4. ``stdio_streams``: the hub's own stdin/stdout pipes in place of the SDK's ``stdio_server``.
5. ``session_user`` and ``SESSION_LOGGERS``: the streamable-HTTP session manager's owner check,
   fed through ``scope["user"]``, and the names of the SDK loggers that write session ids (used by
   ``upstream/ownership.py``).
6. ``without_request_spans``: the SDK's own OpenTelemetry server middleware taken off a server when
   no spans are exported (``telemetry/tracing.py``).

Each has its own docstring: what it touches, why (the measurement or behaviour), and what breaks.
Only the standard library and ``mcp`` are imported here, so downstream/ and upstream/ both may use it.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.runner import _has_modern_envelope
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

CHECKED_AGAINST = "2.3"  # the mcp minor version every touch below was last read and measured against


def has_modern_envelope(params: Mapping[str, Any] | None) -> bool:
    """Whether a request's ``params._meta`` carries the 2026-07-28 protocol-version key: the test the
    SDK's runner uses to pick a request's era (``mcp.server.runner._has_modern_envelope``, private).

    Why: ``upstream/call_lane.py`` serves a 2026-07-28 stdio host's ``tools/call`` beside the SDK's
    dispatch, and must decide the connection's era exactly as the SDK does, or the two would answer
    one host in two eras. Measured (bench/README.md, "Issue 7"): the lane cut the stdio hub's CPU
    per call from 0.92-0.95 ms to 0.70-0.80 ms. Breaks: ``tests/test_call_lane.py``.
    """
    return _has_modern_envelope(params)


async def enter_client(client: Client, negotiate: Callable[[ClientSession], Awaitable[None]]) -> None:
    """``Client.__aenter__`` with ``negotiate(session)`` in place of the SDK's own negotiation, over the
    client's private ``_entered``, ``_build_session``, ``_session`` and ``_exit_stack``.

    Why (``downstream/era.py``; measured in interop/README.md, "Python fixture, hub vs direct, and
    protocol eras"): the SDK's ``mode="auto"`` opens with ``server/discover``, whose answer names only
    2026-07-28 even for a server that serves the handshake too, and on stdio the first request locks
    the era; at 2026-07-28 such a server can push no sampling, elicitation or logs. The hub opens with
    ``initialize`` instead, and its pinned 2026 mode asks ``server/discover`` for the real capabilities
    (the SDK's pin assumes none: no tools listed). Breaks: ``tests/interop/test_eras.py``.
    """
    if client._entered:
        raise RuntimeError("Client is already entered; cannot reenter")
    client._entered = True
    async with AsyncExitStack() as exit_stack:
        session = await exit_stack.enter_async_context(await client._build_session(exit_stack))
        await negotiate(session)
        client._session = session
        client._exit_stack = exit_stack.pop_all()


def host_connection(session: Any) -> Any:
    """The connection behind a server request's ``session`` proxy (private ``_connection``; its
    ``exit_stack``, ``state`` and ``initialize_accepted`` are used), or None where there is none.

    Why (``upstream/server.py``; mcp-sdk notes, sections 2 and 9.3): ``ServerSession`` is rebuilt per
    message, so only the connection identifies one host across requests: the key of its resource
    subscriptions and logging level, the end of its stdio process or HTTP session (its exit stack
    drops what the host left behind), and whether its handshake is done (``ListingMemo`` serves a
    kept listing only then; measured, bench/README.md "Issue 7": listings 3-4x faster). Breaks:
    ``tests/test_listing_memo.py``, ``tests/test_hub.py`` (subscriptions, log levels).
    """
    return getattr(session, "_connection", None)


def _is_pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode  # a character device only if a terminal: uvloop aborts on /dev/null
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def _wire_lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | None]:
    """The non-blank lines of ``reader``; None for a line longer than its limit, which is skipped
    (the next line is read as usual)."""
    overlong = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as e:  # end of input
            if e.partial.strip() and not overlong:
                yield e.partial
            return
        except asyncio.LimitOverrunError as e:  # drop what is buffered of it, keep reading to its end
            await reader.readexactly(e.consumed)
            overlong = True
            continue
        if overlong:
            overlong = False
            yield None
        elif line.strip():
            yield line


Reader = Callable[[bytes | None], tuple[SessionMessage | None, bytes | None]]
WriteLine = Callable[[bytes], Awaitable[None]]


def _wire_line(m: SessionMessage) -> bytes:
    """One message as the SDK frames it; a message pydantic cannot write (a lone surrogate in a string)
    goes out as an error for its request rather than ending the connection."""
    try:
        return m.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except ValueError:
        return unwritable(getattr(m.message, "id", None))


def unwritable(request_id: Any) -> bytes:
    """The line that answers ``request_id`` when its answer cannot be written as JSON."""
    error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(
        code=types.INTERNAL_ERROR, message="the answer held text that is not valid Unicode (a lone surrogate)"))
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@asynccontextmanager
async def stdio_streams(read: Reader, max_line: int) -> AsyncIterator[tuple[Any, Any, WriteLine | None]]:
    """The SDK server's (read, write) streams over the process's stdin and stdout, as
    ``mcp.server.stdio.stdio_server`` gives them, but from asyncio pipes; ``read(line)`` turns each
    wire line (None: one over ``max_line``) into a message for the server and/or an answer the hub
    writes itself. The third item writes a whole line straight to stdout (the call lane's answers),
    between the lines the server's stream writes. A stdin that is not a pipe (a file) gets the SDK's
    own ``stdio_server``, and no third item (None).

    Why (``serving/stdio.py``; bench/README.md): the SDK reads and writes stdio with a thread per
    line, a quarter of the hub's CPU per call; and it drops a line it cannot parse without a word,
    where the hub answers it. Like the SDK, the wire is served from private duplicates of fd 0 and 1,
    with fd 1 pointed at stderr, so a stray print() cannot corrupt the protocol. The message
    framing (one ``model_dump_json(by_alias=True, exclude_unset=True)`` a line) is the SDK's.
    Breaks: ``tests/test_serve.py``, ``tests/test_chain.py``, ``tests/interop``.
    """
    if not (_is_pipe_like(0) and _is_pipe_like(1)):  # e.g. stdin redirected from a file
        async with stdio_server() as (received, sent):
            yield received, sent, None
        return
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_out = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_line)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0))
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0))
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    to_server, received = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    sent, from_server = anyio.create_memory_object_stream[SessionMessage](16)

    async def pump_in() -> None:
        async with to_server:
            async for line in _wire_lines(reader):
                msg, answer = read(line)
                if answer:
                    writer.write(answer)
                    await writer.drain()
                if msg is not None:
                    await to_server.send(msg)

    async def pump_out() -> None:
        async with from_server:
            async for m in from_server:
                writer.write(_wire_line(m))
                await writer.drain()

    async def write_line(line: bytes) -> None:
        writer.write(line)  # one whole line: never interleaved with another
        await writer.drain()

    try:
        with to_server, received, sent, from_server:  # closed even if a pump is cancelled before it began
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump_in)
                tg.start_soon(pump_out)
                try:
                    yield received, sent, write_line
                finally:
                    tg.cancel_scope.cancel()
    finally:
        read_transport.close()
        write_transport.close()
        os.dup2(saved_out, 1)
        os.close(saved_out)


# ``SESSION_LOGGERS``: the SDK loggers that write session ids, which ``upstream/ownership.py`` filters
# (the SDK logs them at INFO, as ``hermes-hub serve`` does; a log reader could act on a live session):
# the server's session manager and transports (their ids and ids callers present) and the client
# transport (ids downstream servers hand out). Unpromised: a renamed or new logger would leak ids.
# Breaks: ``tests/security/test_session_binding.py``.
SESSION_LOGGERS = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http", "mcp.server.sse",
                   "mcp.client.streamable_http")


def session_user(principal: str) -> AuthenticatedUser:
    """What to put in ``scope["user"]`` so that the SDK's streamable-HTTP session manager binds a new
    session to ``principal`` and answers any other principal's request for it with 404 "Session not
    found": the manager reads ``scope["user"].access_token.client_id`` (the shape its own bearer
    middleware leaves), an unpromised detail of ``mcp.server.streamable_http_manager``.

    Why (``upstream/ownership.py``): a session id is all that ties a request to a session, so a
    session must answer only the credential that opened it (an agent run's "Allow it?" question
    lives on it); the hub authenticates with its own middleware, not the SDK's. Breaks:
    ``tests/security/test_session_binding.py``.
    """
    return AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))


def without_request_spans(server: Any) -> None:
    """Take the SDK's ``OpenTelemetryMiddleware`` (private module ``mcp.server._otel``, on by default in
    ``Server.middleware``) off ``server``. With no tracer provider it makes no-op spans, yet it still
    cost the hub ~5% of its CPU per proxied HTTP call (py-spy, ``bench/profile_hub --transport http``,
    issue 22). Breaks if the class moves: the import above fails at start."""
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
