"""kill -9 of the hub during a burst of appends loses nothing that was acknowledged."""

from __future__ import annotations

import json
import signal
import sys

import anyio
import pytest
import sqlean
from mcp import Client

from tests.support import free_port, process, wait_http

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_every_acknowledged_append_survives_a_sigkill_of_the_hub(tmp_path):
    db = tmp_path / "hub.db"
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{db}"}}))
    acknowledged: set[str] = set()

    def start(log_name: str):
        port = free_port()
        argv = [sys.executable, "-m", "hermes_hub", "serve", "--config", str(cfg), "--port", str(port), "-q"]
        return port, process(argv, tmp_path / log_name)

    port, first = start("first.log")
    killed = anyio.Event()
    with first as hub:
        with anyio.fail_after(30):
            await wait_http(f"http://127.0.0.1:{port}/readyz", hub, tmp_path / "first.log")
        try:
            async with Client(f"http://127.0.0.1:{port}/mcp") as host:
                created = await host.call_tool("hermes_session_create", {"title": "burst"})
                sid = created.structured_content["session_id"]

                async def writer(w: int) -> None:
                    for i in range(10_000):
                        text = f"w{w}-{i}"
                        r = await host.call_tool("hermes_session_append",
                                                 {"session_id": sid, "role": "user", "content": text})
                        assert not r.is_error, r.content[0].text
                        acknowledged.add(text)
                        if len(acknowledged) >= 150 and not killed.is_set():
                            hub.send_signal(signal.SIGKILL)  # mid-burst: the other writers are in flight
                            killed.set()

                with anyio.fail_after(30):
                    async with anyio.create_task_group() as tg:
                        for w in range(4):
                            tg.start_soon(writer, w)
        except BaseException:
            if not killed.is_set():  # a failure before the kill is a real one
                raise
        hub.wait(timeout=10)

    assert len(acknowledged) >= 150
    port, second = start("second.log")
    with second as hub:
        with anyio.fail_after(30):
            await wait_http(f"http://127.0.0.1:{port}/readyz", hub, tmp_path / "second.log")
            async with Client(f"http://127.0.0.1:{port}/mcp") as host:
                stored, cursor = [], None
                while True:
                    args = {"session_id": sid, "limit": 200, **({"cursor": cursor} if cursor else {})}
                    page = (await host.call_tool("hermes_session_history", args)).structured_content
                    stored += [m["content"] for m in page["messages"]]
                    if not (cursor := page["next_cursor"]):
                        break
    assert acknowledged <= set(stored)
    assert [m for m in stored if m.startswith("w")] == stored  # nothing torn or foreign
    with sqlean.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
