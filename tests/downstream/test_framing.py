"""Issue 30, item 7, below the served hub: the stdout reader (``framing.read_lines``) against real child
processes, and the SDK session's own calls (integer ids, not the lane's) over the hub's stdio transport:
an answer past ``hub.max_message_bytes`` fails its call, found by the id at its start, at its end, or
(when neither shows it) as the oldest call in flight, and the session answers the next call; the same
over a legacy SSE server's one stream (real HTTP, uvicorn on a free port)."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from mcp import ClientSession, MCPError
from mcp.server import MCPServer

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.framing import Dropped, message_limit, read_lines, set_message_limit, too_big
from hermes_hub.downstream.http_limit import _CappedEvents
from hermes_hub.downstream.transports import Link, open_transport
from tests.support import PROJECT, free_port, until

pytestmark = pytest.mark.anyio


async def lines_of(expression: str, limit: int) -> list[bytes | Dropped]:
    """What the hub reads from a child writing ``expression`` (Python) on its stdout."""
    script = f"import sys; sys.stdout.write({expression}); sys.stdout.flush()"
    async with await anyio.open_process([sys.executable, "-c", script]) as child:
        return [item async for item in read_lines(child.stdout, limit)]


async def test_a_line_within_the_limit_comes_whole_and_blank_lines_are_skipped():
    with anyio.fail_after(20):
        got = await lines_of("'m' * 20_000_000 + '\\n\\n  \\nnext'", 32_000_000)
    assert [len(x) for x in got] == [20_000_000, 4]  # type: ignore[arg-type]


async def test_a_line_past_the_limit_is_dropped_with_its_head_then_its_tail_and_the_next_line_is_read():
    answer = """'{"jsonrpc": "2.0", "result": {"text": "' + 'x' * 3_000_000 + '"}, "id": 41}\\n'"""
    with anyio.fail_after(20):
        crossed, ended, following = await lines_of(answer + " + 'next\\n'", 1_000_000)
    assert isinstance(crossed, Dropped) and not crossed.ended and crossed.head.startswith(b'{"jsonrpc"')
    assert crossed.id() is None  # the id comes last: known only at the end
    assert isinstance(ended, Dropped) and ended.ended and ended.size == 3_000_000 + 52 and ended.id() == 41
    assert following == b"next"


async def test_an_endless_line_is_given_up_after_endless_after_bytes_while_memory_stays_bounded():
    script = "import sys\nw = sys.stdout.buffer.write\nw(b'{\"id\": \"a\\\\\"b\", ')\nwhile True: w(b'x' * 1000000)"
    async with await anyio.open_process([sys.executable, "-c", script]) as child:
        with anyio.fail_after(30):
            got = [item async for item in read_lines(child.stdout, 64 * 1024)]
        child.kill()
    assert len(got) == 2 and all(isinstance(x, Dropped) for x in got)
    assert got[0].id() == 'a"b' and got[1].endless and got[1].size > 256 << 20  # type: ignore[union-attr]


@pytest.fixture
def small_limit() -> Iterator[int]:
    before = message_limit()
    set_message_limit(1 << 20)
    yield 1 << 20
    set_message_limit(before)


async def test_the_sdk_sessions_calls_fail_by_their_id_or_as_the_oldest_and_the_next_call_works(small_limit, tmp_path):
    cfg = ServerConfig(command=sys.executable, args=["-m", "tests.fixtures.flood_server"], cwd=str(PROJECT))
    errors: list[str] = []
    with anyio.fail_after(60):
        async with open_transport("flood", cfg, Path(tmp_path), Link()) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for args in ({"mb": 30}, {"mb": 30, "id_last": True}, {"mb": 30, "id_last": True, "pad": 2000}):
                with pytest.raises(MCPError) as e:
                    await session.call_tool("flood", args)
                errors.append(e.value.message)
            small = await session.call_tool("small", {})
    assert errors == [too_big(small_limit)] * 3
    assert small.content[0].text == "small ok"


async def test_a_legacy_sse_servers_event_past_the_limit_fails_its_call_and_the_one_stream_goes_on(small_limit):
    mcp = MCPServer("sse")

    @mcp.tool()
    def big() -> str:
        return "x" * 3_000_000

    @mcp.tool()
    def small() -> str:
        return "small ok"

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(mcp.sse_app(), port=port, log_level="warning"))
    cfg = ServerConfig(url=f"http://127.0.0.1:{port}/sse", type="sse")
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(30):
            await until(lambda: server.started)
            async with open_transport("sse", cfg, Path("."), Link()) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                with pytest.raises(MCPError) as e:
                    await session.call_tool("big", {})
                small = await session.call_tool("small", {})
        server.should_exit = True
    assert e.value.message == too_big(small_limit)
    assert small.content[0].text == "small ok"  # the same stream: the dropped event was skipped


class _Chunks(httpx2.AsyncByteStream):
    """An HTTP body as a server's network might cut it: chunks of random sizes."""

    def __init__(self, data: bytes, rnd: random.Random) -> None:
        self.data, self.rnd = data, rnd

    async def __aiter__(self) -> AsyncIterator[bytes]:
        at = 0
        while at < len(self.data):
            size = self.rnd.randint(1, 5000)
            yield self.data[at:at + size]
            at += size


@pytest.mark.parametrize("seed", range(40))
async def test_sse_events_pass_whole_and_each_one_past_the_limit_becomes_an_error_answer_to_its_id(seed):
    rnd = random.Random(seed)
    end = rnd.choice([b"\n\n", b"\r\n\r\n"])
    stream, expected = b"", []
    for rid in range(rnd.randint(1, 8)):
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"t": "x" * rnd.choice([10, 3000, 20000])}})
        event = b"event: message" + end[: len(end) // 2] + b"data: " + body.encode() + end
        stream += event
        expected.append(("error" if len(event) > 8000 else "result", rid))
    capped = _CappedEvents(_Chunks(stream, rnd), "s", 8000, httpx2.Request("GET", "http://s/"))
    out = b"".join([chunk async for chunk in capped])
    got = []
    for event in out.replace(b"\r\n", b"\n").split(b"\n\n"):
        if event.strip():
            message = json.loads(next(x[6:] for x in event.split(b"\n") if x.startswith(b"data: ")))
            got.append(("error" if "error" in message else "result", message["id"]))
            assert "error" not in message or message["error"]["message"] == too_big(8000)
    assert got == expected
