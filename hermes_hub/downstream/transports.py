"""Byte pipes to downstream servers: a supervised stdio child, or streamable HTTP / SSE.

We run stdio children ourselves rather than through ``mcp.stdio_client`` because the hub must see
what the SDK hides: the pid, the exit code, every stderr line (logged with the server's name and
kept as a tail for status) and the moment the child dies even when no request is in flight.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.framing import Dropped, InFlight, message_limit, read_lines, too_big
from hermes_hub.downstream.grants import Grants
from hermes_hub.downstream.http_limit import Capped, plain
from hermes_hub.downstream.http_status import StatusAware
from hermes_hub.downstream.interpreter import bundled_demo
from hermes_hub.downstream.keepalive import KeepAlive
from hermes_hub.downstream.lane import StdioLane
from hermes_hub.downstream.oauth import GrantAuth, signs_in

log = logging.getLogger("hermes_hub.downstream")

GRACE_SECONDS = 2.0  # stdin closed -> SIGTERM -> SIGKILL, as the MCP lifecycle spec suggests
MAX_STDERR_LINE = 4096  # bytes of one stderr line kept (logged, shown in status); the rest is dropped


@dataclass
class Link:
    """What the hub knows about one live transport. ``closed`` is set when the peer goes away."""

    closed: anyio.Event = field(default_factory=anyio.Event)
    pid: int | None = None
    exit_code: int | None = None
    exited_on_its_own: bool = False  # the child died before the hub asked it to stop
    hung: bool = False  # it stopped answering: stop it without waiting for it to read its stdin's end
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    http_session: bool = False  # a streamable-HTTP server gave an Mcp-Session-Id (it can push requests)
    needs_auth: str | None = None  # why (and how to fix it) the server refused the hub's OAuth grant, or its lack
    lane: StdioLane | None = None  # a stdio child's plain tool calls, beside the SDK session (``lane``)
    lost: str | None = None  # why the hub itself ended the connection (an endless line on stdout)
    grant_seen: str | None = None  # fingerprint of the grant this link presented (a new login changes it)


class CommandNotFound(OSError):
    """The configured ``command`` (or ``cwd``: see ``key``) does not exist; retrying will not help."""

    def __init__(self, message: str, key: str = "command") -> None:
        super().__init__(message)
        self.key = key


# If the hub itself is killed (SIGKILL, a crash), the kernel kills its children too (Linux).
_SETPRIV = shutil.which("setpriv")
_DIE_WITH_HUB = [_SETPRIV, "--pdeathsig", "KILL", "--"] if _SETPRIV and sys.platform == "linux" else []


def open_transport(name: str, cfg: ServerConfig, base_dir: Path, link: Link, *, owner: str | None = None,
                   grants: Grants | None = None):
    """The async context manager yielding ``(read, write)`` streams for ``cfg``'s transport.

    ``owner``: the hub user whose connection this is (``per_user`` servers), None for the hub's own
    (shared) credentials. ``cfg`` arrives with that user's ``${secret:NAME}``s already filled in
    (``downstream.accounts``); ``grants``: where OAuth grants are kept (None: no OAuth), the one used
    chosen by ``owner``."""
    if cfg.transport == "stdio":
        return _stdio(name, cfg, base_dir, link)
    auth = GrantAuth(name, cfg, owner, grants, link) if grants is not None and signs_in(cfg) else None
    return _remote(name, cfg, link, auth)


# Keep every connection that concurrent calls opened (httpx keeps 20 by default), and make them reusable
# (``keepalive``): else each tool call to an HTTP server opened a TCP connection (issue 22).
KEEP_ALIVE = httpx2.Limits(max_connections=100, max_keepalive_connections=100)


@asynccontextmanager
async def _remote(name: str, cfg: ServerConfig, link: Link, auth: httpx2.Auth | None = None) -> AsyncIterator[tuple]:
    assert cfg.url
    limit = message_limit()  # one answer (a JSON body, an SSE event) is cut off at it as it streams (``http_limit``)

    def sse_http(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                 auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                  transport=Capped(httpx2.AsyncHTTPTransport(), name, limit))

    async def note_session(response: httpx2.Response) -> None:
        link.http_session = link.http_session or "mcp-session-id" in response.headers

    http = httpx2.AsyncClient(headers=cfg.headers, auth=auth, timeout=httpx2.Timeout(30, read=max(300.0, cfg.timeout)),
                              event_hooks={"response": [note_session]},
                              transport=StatusAware(KeepAlive(Capped(httpx2.AsyncHTTPTransport(limits=KEEP_ALIVE),
                                                                     name, limit))))
    async with http:
        transport = sse_client(cfg.url, headers=cfg.headers, auth=auth, httpx_client_factory=sse_http) if (
            cfg.transport == "sse") else streamable_http_client(cfg.url, http_client=http,
                                                                max_sse_event_size=limit + (64 << 10))
        try:
            async with transport as streams:
                yield _EndWatch(streams[0], link.closed), streams[1]
        finally:
            link.closed.set()


class _EndWatch:
    """A remote transport's read stream that sets ``closed`` when it ends. The SDK's HTTP client ends
    it when a request cannot reach the server (``Connection closed``) and has no event of its own."""

    def __init__(self, stream: Any, closed: anyio.Event) -> None:
        self._stream, self._closed = stream, closed

    async def receive(self) -> Any:
        try:
            return plain(await self._stream.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._closed.set()
            raise

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context``, read by the SDK's dispatcher
        return getattr(self._stream, name)


def resolve_command(command: str, env: dict[str, str], cwd: Path | None, args: Sequence[str] = ()) -> str:
    """``command`` as an executable path, or CommandNotFound naming what was searched. A bundled demo
    server's ``python`` is the hub's own interpreter (see ``interpreter``)."""
    if own := bundled_demo(command, args, cwd):
        return own
    if os.sep in command:
        path = (cwd / command) if cwd and not os.path.isabs(command) else Path(command)
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise CommandNotFound(f"command '{command}' does not exist or is not executable")
    found = shutil.which(command, path=env.get("PATH"))
    if not found:
        raise CommandNotFound(f"command '{command}' was not found on PATH")
    return found


class _Child:
    """The pumps between a stdio child's pipes and the session's streams, and what they share."""

    def __init__(self, name: str, process: Process, link: Link, lane: StdioLane,
                 to_session: MemoryObjectSendStream[SessionMessage | Exception],
                 from_session: MemoryObjectReceiveStream[SessionMessage]) -> None:
        self.name, self.process, self.link, self.lane = name, process, link, lane
        self.to_session, self.from_session = to_session, from_session
        self.stderr_done, self.stdout_eof = anyio.Event(), anyio.Event()
        self.limit = message_limit()
        self.in_flight = InFlight()

    async def dropped(self, item: Dropped) -> None:
        """An answer over the limit fails its own call (by its id, else the oldest in flight), at once."""
        why = too_big(self.limit)
        rid = item.id()
        if rid is None and not item.ended:
            return  # its id may come last: known at its end
        if rid is not None and self.lane.fail(rid, why):
            return
        flight = self.in_flight
        if rid is not None and flight.take(rid) or rid is None and (rid := flight.oldest()) is not None:
            await self.to_session.send(InFlight.failure(rid, why))
        elif rid is None:
            self.lane.fail_oldest(why)

    async def pump_stdout(self) -> None:
        async with self.to_session:
            handled = False  # the line being dropped has failed its call already
            async for line in read_lines(self.process.stdout, self.limit):
                if isinstance(line, Dropped):
                    if not line.ended and not line.endless:
                        log.warning("[%s] dropping a message of more than %d bytes on stdout (hub.max_message_bytes)",
                                    self.name, self.limit)
                    if not handled or line.endless:
                        await self.dropped(line)
                    handled = not line.ended and line.id() is not None
                    if line.endless:  # nothing after it can be read: restart the child
                        log.warning("[%s] wrote more than %d bytes with no newline; restarting it", self.name, line.size)
                        self.link.hung = True
                        self.link.lost = f"it wrote more than {line.size:,} bytes on stdout with no newline; restarted"
                        self.lane.close(why := f"{too_big(self.limit)} (a line with no end: the server is restarted)")
                        for rid in iter(self.in_flight.oldest, None):
                            await self.to_session.send(InFlight.failure(rid, why))
                        self.link.closed.set()
                        return
                    continue
                if self.lane.pending and await self.lane.take(line):
                    continue
                try:
                    msg: SessionMessage | Exception = SessionMessage(
                        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:
                    log.warning("[%s] not JSON-RPC on stdout (log to stderr instead): %.200s", self.name, line)
                    msg = exc
                else:  # an answer to a lane call whose id the line spelt with escapes
                    if self.lane.pending and isinstance(msg.message, types.JSONRPCResponse | types.JSONRPCError) and \
                            self.lane.claim(msg.message.model_dump(by_alias=True, mode="json", exclude_none=True)):
                        continue
                    self.in_flight.answered(msg.message)
                try:
                    await self.to_session.send(msg)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
            self.stdout_eof.set()
            # stdout ended, so the child is probably exiting: let calls in flight fail once its exit
            # code and last stderr lines are known (watch_exit), so their error can name them
            with anyio.move_on_after(2):
                await self.link.closed.wait()
            self.lane.close("the server closed its stdout")

    async def pump_stderr(self) -> None:
        try:
            async for line, size in _lines(self.process.stderr, MAX_STDERR_LINE):
                text = line.decode("utf-8", "replace").rstrip()
                if size > len(line):
                    text += f" … ({size - len(line):,} more bytes not kept)"
                self.link.stderr_tail.append(text)
                log.info("[%s] %s", self.name, text)
        finally:
            self.stderr_done.set()

    async def pump_stdin(self) -> None:
        assert self.process.stdin
        try:
            async with self.from_session:
                async for m in self.from_session:
                    self.in_flight.sent(m.message)
                    await self.process.stdin.send(_line(m))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass

    async def watch_exit(self) -> None:
        self.link.exit_code = await self.process.wait()
        with anyio.move_on_after(1):  # let the last stderr lines land in the tail first
            await self.stderr_done.wait()
        self.lane.close(f"the server exited (code {self.link.exit_code})")
        self.link.closed.set()
        await self.to_session.aclose()  # in-flight requests fail now, not at their timeout


@asynccontextmanager
async def _stdio(name: str, cfg: ServerConfig, base_dir: Path, link: Link) -> AsyncIterator[tuple]:
    assert cfg.command
    env = get_default_environment() | cfg.env
    cwd = (base_dir / cfg.cwd) if cfg.cwd else None
    if cwd and not cwd.is_dir():
        raise CommandNotFound(f"cwd '{cwd}' is not a directory", key="cwd")
    command = resolve_command(cfg.command, env, cwd, cfg.args)
    process = await anyio.open_process(
        [*_DIE_WITH_HUB, command, *cfg.args],
        env=env,
        cwd=cwd,
        start_new_session=True,  # its own process group, so we can stop the whole tree
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    link.pid = process.pid
    lane = link.lane = StdioLane(process.stdin.send)
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](16)
    child = _Child(name, process, link, lane, to_session, from_session)

    # All four ends are closed on the way out, also those of a pump cancelled before it began.
    with to_session, read, write, from_session:
        async with anyio.create_task_group() as tg:
            for pump in (child.pump_stdout, child.pump_stderr, child.pump_stdin, child.watch_exit):
                tg.start_soon(pump)
            try:
                yield read, write
            finally:
                with anyio.CancelScope(shield=True):
                    if child.stdout_eof.is_set():  # the child closed its stdout: it is probably exiting; let it
                        with anyio.move_on_after(1):
                            await process.wait()
                    link.exited_on_its_own = process.returncode is not None
                    await _stop(process, polite=not link.hung)
                    lane.close("the hub stopped the server")
                    with anyio.move_on_after(GRACE_SECONDS):
                        await process.aclose()  # its pipes now, not whenever the GC finds them (maybe after the loop)
                tg.cancel_scope.cancel()


def _line(m: SessionMessage) -> bytes:
    try:
        return (m.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
    except ValueError:  # e.g. a lone surrogate: escaped as it came, rather than ending the connection
        return (json.dumps(m.message.model_dump(by_alias=True, exclude_unset=True)) + "\n").encode()


async def _lines(stream: ByteReceiveStream | None, limit: int) -> AsyncIterator[tuple[bytes, int]]:
    """``(line, its size)`` for each non-blank line of ``stream`` (a child's stderr), in time linear in
    its length (each chunk is scanned once, never the line so far); only the first ``limit`` bytes of
    a line are kept. A child's stdout is read by ``framing.read_lines``."""
    assert stream is not None
    parts: list[bytes] = []
    kept = size = 0

    def add(piece: bytes) -> None:
        nonlocal kept, size
        size += len(piece)
        if kept < limit and piece:
            parts.append(piece[: limit - kept])
            kept += len(parts[-1])

    def take() -> tuple[bytes, int]:
        nonlocal parts, kept, size
        line, whole = b"".join(parts), size
        parts, kept, size = [], 0, 0
        return line, whole

    try:
        while True:
            chunk = await stream.receive(1 << 16)
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                add(chunk[start:end])
                start = end + 1
                line, whole = take()
                if line.strip():
                    yield line, whole
            add(chunk[start:])
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        line, whole = take()
        if line.strip():
            yield line, whole


async def _stop(process: Process, polite: bool = True) -> None:
    """Close stdin, then SIGTERM, then SIGKILL the child's process group; every wait bounded.
    Not ``polite`` (a child that stopped answering): straight to SIGTERM."""
    if process.returncode is None and process.stdin is not None:
        try:
            await process.stdin.aclose()
        except (OSError, anyio.BrokenResourceError):
            pass
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is None and not polite:
            continue
        if sig is not None:
            try:
                os.killpg(process.pid, sig)
                if sig == signal.SIGTERM:  # a stopped (SIGSTOP) child handles SIGTERM only once continued
                    os.killpg(process.pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass
        with anyio.move_on_after(GRACE_SECONDS):
            await process.wait()
            break
    if process.returncode is not None:
        try:  # the leader is gone; make sure nothing it forked lingers
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
