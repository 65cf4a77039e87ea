"""Large limits take their units from the store a block at a time (``hermes_hub.core.pipeline.blocks``): a call
costs no store write while its block lasts, two replicas on one store still never pass the limit together,
what a block has left goes back once its counter is idle and when the hub stops, and small limits stay
exact (a freed unit is in the store at once, for the other replica)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hermes_hub.core.pipeline.blocks import PARTS, REFRESH, Blocks
from hermes_hub.infra.storage import open_store
from tests.support import until

pytestmark = pytest.mark.anyio
LIMIT = 10 * PARTS  # blocks of 10
MINUTE = 60.0


class CountingStore:
    """The real store, with a count of the counter writes that reached it."""

    def __init__(self, store: Any) -> None:
        self.store, self.writes = store, 0

    async def take_counter(self, *args: Any, **kwargs: Any) -> int | None:
        self.writes += 1
        return await self.store.take_counter(*args, **kwargs)

    async def give_counter(self, *args: Any) -> None:
        self.writes += 1
        await self.store.give_counter(*args)


async def take(blocks: Blocks, store: Any, counter: str, limit: int = LIMIT, win: float = MINUTE) -> bool:
    return await blocks.take(store, counter, win, limit, now=win + 1, expires_at=win + 3600)


async def test_a_large_limit_takes_blocks_gives_back_what_is_idle_and_shares_with_another_replica(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as raw:
        store = CountingStore(raw)
        a, b = Blocks(lambda: store), Blocks(lambda: store)

        async def stored(counter: str, win: float = MINUTE) -> int:
            return await raw.read_counter(counter, win, now=win + 1)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(a.run)
                tg.start_soon(b.run)
                await until(lambda: a.running and b.running)
                # eleven calls on replica a: two blocks taken, two store writes
                assert all([await take(a, store, "api|minute|ann") for _ in range(11)])
                writes, counted = store.writes, await stored("api|minute|ann")
                # once the counter is idle, the 9 units a's second block left go back
                async def given_back(counter: str, below: int, win: float = MINUTE) -> bool:
                    return await stored(counter, win) < below

                await until(lambda: given_back("api|minute|ann", 20))
                returned = await stored("api|minute|ann")

                # calls at once: replica a holds a block while b takes everything else, one at a time at the end
                held = [await take(a, store, "api|busy|ann", win=0) for _ in range(3)]  # a block of 10, 3 in use
                on_b = 0
                while await take(b, store, "api|busy|ann", win=0):
                    on_b += 1
                refused_while_a_holds = await stored("api|busy|ann", 0)
                for _ in held:
                    await a.give(store, "api|busy|ann", 0, LIMIT)
                await until(lambda: given_back("api|busy|ann", LIMIT, 0))
                after_a_idle = await take(b, store, "api|busy|ann", win=0)
                tg.cancel_scope.cancel()  # the hub stops: b gives back every unit it has not used
            with_b_stopped = await stored("api|busy|ann", 0)
    assert (writes, counted) == (2, 20)
    assert returned == 11  # exactly the calls made
    assert all(held) and on_b == LIMIT - 10 and refused_while_a_holds == LIMIT  # never past the limit together
    assert after_a_idle  # a's spare units went back, so b is served again
    # b holds on_b + 1 units in use (its calls never ended); its unused spare went back when it stopped
    assert with_b_stopped == on_b + 1


async def test_small_limits_and_blocks_not_running_are_exact(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as raw:
        store = CountingStore(raw)
        stopped = Blocks(lambda: store)  # no ``run``: a catalog outside a hub
        assert [await take(stopped, store, "big|minute|ann") for _ in range(3)] == [True] * 3
        assert store.writes == 3 and await raw.read_counter("big|minute|ann", MINUTE, now=MINUTE + 1) == 3
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                running = Blocks(lambda: store)
                tg.start_soon(running.run)
                await until(lambda: running.running)
                small = 2 * PARTS - 1  # under two units a block: one store write a unit
                assert await take(running, store, "one|busy|ann", small, win=0)
                await running.give(store, "one|busy|ann", 0, small)
                freed = await raw.read_counter("one|busy|ann", 0, now=1)  # at once, no idle wait
                tg.cancel_scope.cancel()
    assert freed == 0 and "one|busy|ann" not in running.held


async def test_a_burst_shares_one_refill_a_lowered_limit_is_honoured_and_a_busy_counter_stays_fresh(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as raw:
        store = CountingStore(raw)
        blocks = Blocks(lambda: store)
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(blocks.run)
                await until(lambda: blocks.running)
                granted: list[bool] = []

                async def call() -> None:
                    granted.append(await take(blocks, store, "api|busy|ann", win=0))
                async with anyio.create_task_group() as burst:  # 10 first calls at once: one block serves them
                    for _ in range(10):
                        burst.start_soon(call)
                burst_writes = store.writes

                # a reload lowers the limit to 200 (blocks of 3): the old block's spare units go back first
                lowered = [await take(blocks, store, "api|busy|ann", limit=200, win=0) for _ in range(190)]
                counted = await raw.read_counter("api|busy|ann", 0, now=1)
                over = await take(blocks, store, "api|busy|ann", limit=200, win=0)

                # a counter that keeps serving from its block still writes to the store once a REFRESH
                before = store.writes
                for n in range(1, 4):
                    await blocks.give(store, "api|busy|ann", 0, 200)
                    late = 1 + n * REFRESH
                    assert await blocks.take(store, "api|busy|ann", 0, 200, now=late, expires_at=late + 3600)
                refreshes = store.writes - before
                tg.cancel_scope.cancel()
    assert granted == [True] * 10 and burst_writes == 1
    assert all(lowered) and counted == 200 and not over  # the 10 running and 190 more: the new limit, exactly
    assert refreshes == 3
