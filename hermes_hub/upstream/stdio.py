"""stdio: for hosts such as Claude Desktop that spawn the hub. Ends when the host closes stdin,
or on SIGTERM / SIGINT; either way every child server is stopped before the hub exits."""

from __future__ import annotations

import logging
import os
import signal
from typing import TYPE_CHECKING

import anyio
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from hermes_hub.hub import Hub

log = logging.getLogger("hermes_hub.upstream")


async def serve_stdio(hub: Hub) -> None:
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for sig in signals:
                    log.info("received %s; stopping servers", signal.Signals(sig).name)
                    # The SDK reads stdin in a worker thread that only a closed stdin wakes, so a
                    # cancelled server could wait forever: stop the children first, then leave.
                    with anyio.CancelScope(shield=True):
                        await hub.pool.stop_all()
                    logging.shutdown()
                    os._exit(128 + sig)

        async def serve() -> None:
            async with hub, stdio_server() as (read, write):
                await hub.server.run(read, write, hub.server.create_initialization_options())
            tg.cancel_scope.cancel()  # stdin closed: the host is gone

        tg.start_soon(stop_on_signal)
        tg.start_soon(serve)
