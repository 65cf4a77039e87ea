"""stdio: for hosts such as Claude Desktop that spawn the hub. Ends when the host closes stdin,
or on SIGTERM / SIGINT; either way every child server is stopped before the hub exits.

The hub answers its host at once, whatever its servers do: it serves what is READY and announces
each server that settles later with list_changed. Claude Code, for one, gives a server 5 s and then
sends the model out without it. One-shot clients that list once (the Inspector CLI) have their first
tools/list held for at most ``hub.first_list_wait`` (``upstream/first_list.py``). stdin and stdout are served from asyncio pipes rather than the SDK's
thread-per-line ``stdio_server`` (``sdk.stdio_streams``: measured, a quarter of the hub's CPU per call went there).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from hermes_hub.infra.call import acting_as
from hermes_hub.infra.sdk import stdio_streams
from hermes_hub.protocol.upstream.call_lane import call_lane
from hermes_hub.protocol.upstream.rejection import misread_request, reject, screen, too_long

if TYPE_CHECKING:
    from hermes_hub.app.hub import Hub

log = logging.getLogger("hermes_hub.protocol.upstream")
MAX_LINE = 64 * 1024 * 1024
STOP_GRACE = 5.0  # seconds a signalled hub waits for its orderly stop before it forces one


async def serve_stdio(hub: Hub, toolset: str | None = None) -> int:
    """Serve until the host closes stdin (exit code 0) or a signal arrives (128 + its number);
    ``toolset``: serve that toolset's endpoint rather than the whole catalog."""
    endpoint = hub.endpoint(toolset)
    stopped: list[int] = []
    wire: list[Any] = []  # the stream of messages from the host, once open
    done = anyio.Event()
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for sig in signals:
                    log.info("received %s; stopping servers", signal.Signals(sig).name)
                    stopped.append(sig)
                    # Should the orderly stop below wedge, leave anyway (the children die with us).
                    watchdog = threading.Timer(2 * STOP_GRACE + 1, os._exit, (128 + sig,))
                    watchdog.daemon = True
                    watchdog.start()
                    with anyio.CancelScope(shield=True):
                        # Ending the host's stream ends the server as if stdin closed: leaving
                        # ``async with hub`` then writes the audit rows and stops the children.
                        if wire:
                            await wire[0].aclose()
                        else:
                            tg.cancel_scope.cancel()  # still starting
                        with anyio.move_on_after(STOP_GRACE):
                            await done.wait()
                        if not done.is_set():
                            await hub.shutdown(STOP_GRACE)
                            logging.shutdown()
                            os._exit(128 + sig)
                    return

        async def serve() -> None:
            try:
                async with hub:
                    lanes: list[Any] = []  # the call lane, once open: it may take a line before it is parsed

                    def read_line(line: bytes | None) -> tuple[SessionMessage | None, bytes | None]:
                        return _read(line, lanes[0].take_line if lanes else None)

                    # stdio carries no caller: the host that spawned the hub acts as the local user
                    with acting_as(hub.local):
                        async with stdio_streams(read_line, MAX_LINE) as (read, write, write_line), \
                                call_lane(hub, read, write, endpoint, write_line) as lane:
                            lanes.append(lane)
                            wire.append(read)
                            await endpoint.server.run(lane, write, endpoint.server.create_initialization_options())
            finally:
                done.set()
            tg.cancel_scope.cancel()  # stdin closed, or a signal ended the stream

        tg.start_soon(stop_on_signal)
        tg.start_soon(serve)
    return 128 + stopped[0] if stopped else 0


def _read(line: bytes | None, take: Callable[[bytes], bool] | None = None,
          ) -> tuple[SessionMessage | None, bytes | None]:
    """One wire line: the message for the SDK, or the answer the hub gives itself (``b""``: none),
    since the SDK drops what it cannot parse without a word; ``take(line)`` true: the call lane serves it."""
    if line is None:
        return None, too_long(MAX_LINE)
    if (answer := screen(line)) is not None:
        return None, answer
    if take is not None and take(line):
        return None, b""
    try:
        msg = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        return None, reject(line)
    if isinstance(msg.message, types.JSONRPCNotification) and b'"id"' in line:
        # an unusable id makes the SDK read a request as a notification, never answered
        if (answer := misread_request(line)) is not None:
            return None, answer
    return msg, None
