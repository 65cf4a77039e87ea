"""The floor under any pass-through written in Python: a line proxy in front of the echo server.

    python -m bench.floor_proxy   # stdio; starts ``python -m bench.echo_server`` as its child

It parses every JSON-RPC line, renames the tool (``echo_echo`` <-> ``echo``, as the hub's prefix
does) and writes it on, with no MCP SDK, no checks, no audit: what a raw pass-through of
``tools/call`` could cost at best. ``bench/proxy.py`` measures it beside the hub (route "floor").
"""

from __future__ import annotations

import asyncio
import json
import sys

PREFIX = "echo_"
LIMIT = 64 * 1024 * 1024


async def main() -> None:
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(sys.executable, "-m", "bench.echo_server", limit=LIMIT,
                                                 stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert child.stdin and child.stdout
    reader = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def down() -> None:  # host -> server
        while line := await reader.readline():
            msg = json.loads(line)
            if msg.get("method") == "tools/call":
                msg["params"]["name"] = msg["params"]["name"].removeprefix(PREFIX)
            child.stdin.write(json.dumps(msg).encode() + b"\n")
        child.stdin.close()

    async def up() -> None:  # server -> host
        while line := await child.stdout.readline():
            msg = json.loads(line)
            for tool in (msg.get("result") or {}).get("tools", []):
                tool["name"] = PREFIX + tool["name"]
            writer.write(json.dumps(msg).encode() + b"\n")

    await asyncio.gather(down(), up())
    await child.wait()


if __name__ == "__main__":
    asyncio.run(main())
