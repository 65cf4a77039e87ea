"""Chaos, the CI cut of ``bench/chaos.py``: 8 hosts call a Python server through a real
``hermes-hub serve`` process while its child is SIGKILLed again and again.

Bounds are generous and kills follow the server's state, not a clock, so a loaded 2-core machine
changes how long this takes, not whether it passes: a kill comes once the server has served for
a while (READY for 2 s and answered calls since), as the chaos benchmark's kills every 3 s do.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from tests.support import served_hub, toy, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CLIENTS = 8
KILLS = 3
SERVER_TIMEOUT = 5.0  # the toy server's ``timeout`` in the hub
CALL_BOUND = SERVER_TIMEOUT + 10.0  # a call still running here is past its timeout
READY_BOUND = 20.0  # READY again after a kill, on a loaded CI machine (about 1 s when quiet)


async def status(client: Client) -> dict[str, Any]:
    r = await client.call_tool("hermes_hub_status", {})
    return next(s for s in (r.structured_content or {})["servers"] if s["name"] == "toy")


class Load:
    """Outcomes of every call the hosts made, and how many succeeded since the last kill."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.unclear: list[str] = []
        self.ok_since_kill = 0

    def record(self, text: str | None, past_timeout: bool = False) -> bool:
        """Count one call (``text``: its error, None if it succeeded); True if it succeeded."""
        if past_timeout:
            self.outcomes["past timeout"] += 1
        elif text is None:
            self.outcomes["ok"] += 1
            self.ok_since_kill += 1
        elif "server 'toy'" in text and ("is not ready (state " in text or "connection lost" in text):
            self.outcomes["clear failure"] += 1
        else:
            self.outcomes["unclear failure"] += 1
            self.unclear.append(text)
        return text is None and not past_timeout

    async def host(self, client: Client, n: int, stop: anyio.Event) -> None:
        i = 0
        while not stop.is_set():
            i += 1
            expected = f"{n}-{i}"
            ok = False
            with anyio.move_on_after(CALL_BOUND) as bound:
                try:
                    r = await client.call_tool("toy_echo", {"text": expected})
                except MCPError as e:
                    ok = self.record(f"MCPError {e.code}: {e.message}")
                else:
                    text = r.content[0].text if r.content else repr(r)
                    ok = self.record(None if not r.is_error and text == expected else text)
            if bound.cancelled_caught:
                ok = self.record(None, past_timeout=True)
            # A host's pause between calls (not a wait for a state); after an error it waits longer,
            # as a host reading "not ready, retry once it is READY" would, so failing fast does not
            # turn the down time into most of the calls.
            await anyio.sleep(0.02 if ok else 0.2)


async def test_hosts_calling_through_repeated_sigkills_get_results_or_clear_errors_and_the_server_is_back_each_time(
    tmp_path,
):
    config = {"mcpServers": {"toy": toy(timeout=SERVER_TIMEOUT)}}
    load, stop = Load(), anyio.Event()
    back_after: list[float] = []
    async with served_hub(config, tmp_path) as url:
        async with Client(url) as watcher, AsyncExitStack() as stack:
            hosts = [await stack.enter_async_context(Client(url)) for _ in range(CLIENTS)]
            async with anyio.create_task_group() as tg:
                for n, h in enumerate(hosts):
                    tg.start_soon(load.host, h, n, stop)
                for _ in range(KILLS):
                    async def serving_a_while() -> dict | None:  # READY for 2 s and answering
                        s = await status(watcher)
                        return s if s["state"] == "READY" and s["seconds_in_state"] >= 2 and load.ok_since_kill >= 20 \
                            else None

                    s = await until(serving_a_while, timeout=60)
                    os.kill(s["pid"], signal.SIGKILL)
                    killed, load.ok_since_kill = anyio.current_time(), 0
                    async def back(old: int = s["pid"]) -> bool:
                        s2 = await status(watcher)
                        return s2["state"] == "READY" and s2["pid"] != old

                    await until(back, timeout=READY_BOUND, every=0.02)
                    back_after.append(anyio.current_time() - killed)
                await until(lambda: load.ok_since_kill >= 20, timeout=60)  # calls succeed again after the last kill
                stop.set()
            final = await status(watcher)
        async with httpx2.AsyncClient(timeout=5) as http:
            alive = (await http.get(url.removesuffix("/mcp") + "/healthz")).status_code
    assert alive == 200, "the hub process must survive every kill of its child"
    assert load.outcomes["past timeout"] == 0
    assert load.unclear == [], load.unclear[:5]
    assert load.outcomes["clear failure"] > 0, "the kills were seen by the hosts"
    assert load.outcomes["ok"] > load.outcomes["clear failure"], load.outcomes
    assert len(back_after) == KILLS and final["state"] == "READY" and final["restarts"] == KILLS
    assert final["last_exit_code"] == -signal.SIGKILL
    # each kill came after a run, so no backoff: the restart starts at once
    assert (tmp_path / "hub.log").read_text().count("RESTARTING (restarting at once)") == KILLS
