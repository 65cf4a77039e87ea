"""guards.limits: calls a minute, calls at once and the agent's model tokens a day, each refused with a
tool error naming the limit and when it resets, each reset by the clock (the test's own) or by the end of
the running call; two replicas on one PostgreSQL share a limit."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import timedelta
from typing import Any

import anyio
import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.app.hub import Hub
from hermes_hub.core.pipeline import originals
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import utcnow
from hermes_hub.services.vault import SecretKey, Vault
from tests.postgres import new_database
from tests.support import PROJECT, as_user, serve_process, until, until_listed

pytestmark = pytest.mark.anyio
START = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC: a minute's and a day's start
RECORDS = {"command": sys.executable, "args": ["-m", "tests.guards.records_server"], "cwd": str(PROJECT)}
RULES = [{"when": "look up the customer", "tool_calls": [{"name": "records_customer", "arguments": {"customer_id": "c1"}}]},
         {"when": "Ann Lee", "text": "Found her."}]
LIMITS = [{"name": "lookups", "tools": ["records_customer"], "calls_per_minute": 2},
          {"name": "one-wait", "tools": ["records_wait"], "concurrent": 1},
          {"name": "agent-day", "tools": ["hermes_agent_run"], "tokens_per_day": 50}]


class Clock:
    def __init__(self) -> None:
        self.now = START + 5

    def __call__(self) -> float:
        return self.now


def text(result: Any) -> str:
    return result.content[0].text


@pytest.mark.slow
async def test_each_limit_refuses_naming_itself_and_its_reset_and_resets_on_the_clock(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    config = parse_config({"mcpServers": {"records": RECORDS}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "agent": {"provider": "scripted", "script": "model.json"}, "memory": {"embedder": "none"},
                           "guards": {"limits": LIMITS}}, base_dir=tmp_path)
    clock = Clock()
    async with Hub(config) as hub:
        hub.limits.clock = clock
        with anyio.fail_after(60):
            assert await hub.wait_settled(30)
            async with hub.client() as host:
                first = [await host.call_tool("records_customer", {"customer_id": "c1"}) for _ in range(2)]
                over = await host.call_tool("records_customer", {"customer_id": "c1"})
                clock.now += 55  # 08:01:00: a new minute
                again = await host.call_tool("records_customer", {"customer_id": "c1"})

                user = hub.local.user_id
                async with anyio.create_task_group() as tg:
                    held: list[Any] = []

                    async def hold() -> None:
                        held.append(await host.call_tool("records_wait", {"seconds": 2}))
                    tg.start_soon(hold)
                    await until(lambda: hub.store.read_counter(f"one-wait|busy|{user}", 0, now=clock()), 20)
                    busy = await host.call_tool("records_wait", {"seconds": 0})
                after = await host.call_tool("records_wait", {"seconds": 0})

                run = await host.call_tool("hermes_agent_run", {"task": "please look up the customer"})
                spent = await host.call_tool("hermes_agent_run", {"task": "please look up the customer"})
                clock.now = START + 86400 + 1  # the next UTC day
                next_day = await host.call_tool("hermes_agent_run", {"task": "please look up the customer"})

    assert not any(r.is_error for r in first) and not again.is_error
    assert over.is_error and text(over) == (
        "limit 'lookups' reached: 2 calls a minute for user " f"{user} on tools records_customer; it resets at "
        "2027-01-15 08:01:00 UTC (in 55 s) (guards.limits in hub.json)")
    assert over.meta["hermes-hub/limit"] == {"limit": "lookups", "retry_after": 55, "resets_at": START + 60}
    assert held[0].content[0].text == "waited" and not after.is_error
    assert busy.is_error and text(busy).startswith(f"limit 'one-wait' reached: 1 call at once for user {user}")
    assert "as soon as one of the running calls ends" in text(busy)
    assert not run.is_error and "The run stopped before its next round: limit 'agent-day' reached" in (
        run.structured_content["answer"])
    assert spent.is_error and text(spent).startswith(f"limit 'agent-day' reached: 50 model tokens a day for user {user}")
    assert "it resets at 2027-01-16 00:00:00 UTC" in text(spent)
    assert not next_day.is_error


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_counter_takes_within_its_limit_gives_back_and_expires_and_originals_are_pruned(backend, tmp_path,
                                                                                            request):
    url = (await new_database(request.getfixturevalue("pg_server")) if backend == "postgres"
           else f"sqlite:///{tmp_path}/c.db")
    async with open_store(url) as store:
        takes = [await store.take_counter("r|minute|ann", 60.0, 1, 2, now=61.0, expires_at=120.0) for _ in range(3)]
        await store.give_counter("r|minute|ann", 60.0, 1)
        back = await store.take_counter("r|minute|ann", 60.0, 1, 2, now=62.0, expires_at=120.0)
        expired = await store.take_counter("r|minute|ann", 60.0, 1, 2, now=120.0, expires_at=180.0)
        read = await store.read_counter("r|minute|ann", 60.0, now=121.0)
        pruned = await store.prune_counters(now=500.0)
        vault = Vault(store, SecretKey.from_text("k" * 40, "test", shared=False))
        await vault.put("ann", originals.KIND, "0a1b2c3d4e5f6071", "{}")
        owners = await store.sealed_owners(originals.KIND, "0a1b2c3d4e5f6071")
        kept = await originals.prune(store, keep_hours=1)
        await store.put_sealed(replace(await store.get_sealed("ann", originals.KIND, "0a1b2c3d4e5f6071"),
                                       updated_at=utcnow() - timedelta(hours=2)))
        gone = await originals.prune(store, keep_hours=1)
    assert takes == [1, 2, None] and back == 2 and expired == 1 and read == 1 and pruned == 1
    assert owners == ["ann"] and kept == 0 and gone == 1  # masked originals go after guards.mask.keep_hours


@pytest.mark.slow
async def test_two_replicas_on_one_postgresql_share_a_limit(pg_server, tmp_path):
    config = {"mcpServers": {"records": RECORDS}, "storage": {"url": await new_database(pg_server)},
              "memory": {"embedder": "none"}, "auth": {"tokens": [{"token": "ann-token-0123456789ab", "user": "ann"}]},
              "guards": {"limits": [{"name": "one-wait", "tools": ["records_wait"], "concurrent": 1}]}}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with serve_process(config, tmp_path / "a") as a, serve_process(config, tmp_path / "b") as b:
        with anyio.fail_after(100):
            async with as_user(a.url, "ann-token-0123456789ab") as on_a, as_user(b.url, "ann-token-0123456789ab") as on_b:
                await until_listed(on_a, "records_wait", 40)
                await until_listed(on_b, "records_wait", 40)
                async with anyio.create_task_group() as tg:
                    held: list[Any] = []

                    async def hold() -> None:  # until it holds the unit (b's probe may hold it for an instant)
                        async def take() -> Any:
                            r = await on_a.call_tool("records_wait", {"seconds": 10})
                            return None if r.is_error and "reached" in text(r) else r
                        held.append(await until(take, 40, every=0.1))
                    tg.start_soon(hold)

                    async def refused_on_b() -> Any:
                        assert not held, f"the call holding the unit ended first: {held}"
                        r = await on_b.call_tool("records_wait", {"seconds": 0})
                        return r if r.is_error else None
                    refused = await until(refused_on_b, 40, every=0.2)
                freed = await on_b.call_tool("records_wait", {"seconds": 0})
    assert text(refused).startswith("limit 'one-wait' reached: 1 call at once for user ann")
    assert text(held[0]) == "waited" and not freed.is_error
