"""Units of the limits' counters taken from the store a block at a time, for limits large enough to allow it.

    blocks = Blocks(store=lambda: hub.store)   # one per hub; ``run`` in its task group
    ok = await blocks.take(store, "api|minute|ann", win, 6000, now=now, expires_at=win + 60)
    await blocks.give(store, "api|busy|ann", 0, 500)    # a running call's unit, back when it ends

A limit below ``2 * PARTS`` units is exact across replicas: each unit is one upsert in the store, and a
running call's unit goes back as the call ends (~0.1 ms of store work each, on SQLite). A larger one
(6,000 calls a minute, 500 at once) would pay that on every call for a precision nobody asked of it:
its units are taken ``limit // PARTS`` at a time and handed out from memory, and freed concurrency units
stay here for the next call. What a block has left goes back to the store once its counter has been
idle for ``IDLE`` seconds, and when the hub stops.

So another replica can be refused while this one holds at most about one block it has not used (1/64
of the limit) for at most ``IDLE`` seconds after its last call; a hub that dies holding a block leaves it
counted until the window ends (a minute) or the counter expires (``limits.LEASE``), as a hub that dies
mid-call leaves that call's unit. Without ``run`` going (a catalog outside a hub), every limit is exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import anyio

PARTS = 64  # a block is this share of the limit
IDLE = 0.25  # seconds a counter's unused units stay here after its last take or give


class Counters(Protocol):
    """What blocks need of the store (``hermes_hub.storage.crud.counters``)."""

    async def take_counter(self, name: str, win: float, amount: int, limit: int, *, now: float,
                           expires_at: float) -> int | None: ...
    async def give_counter(self, name: str, win: float, amount: int) -> None: ...


@dataclass
class _Held:
    win: float  # the counter's window (a minute's start; 0 for calls at once)
    free: int = 0  # units the store counts as taken that no call uses
    last: float = 0.0  # monotonic time of the last take or give


class Blocks:
    def __init__(self, store: Callable[[], Counters | None]) -> None:
        self.store = store
        self.held: dict[str, _Held] = {}
        self.running = False  # while ``run`` returns idle units; without it every unit is the store's
        self._wake = anyio.Event()

    def block(self, limit: int) -> int:
        """Units taken from the store at once for ``limit``; 1 when it is counted exactly."""
        size = limit // PARTS if self.running else 1
        return size if size >= 2 else 1

    async def take(self, store: Counters, counter: str, win: float, limit: int, *, now: float,
                   expires_at: float) -> bool:
        """One unit of ``counter`` in window ``win``; False when the limit is reached."""
        size = self.block(limit)
        if size == 1:
            return await store.take_counter(counter, win, 1, limit, now=now, expires_at=expires_at) is not None
        held = self.held.get(counter)
        if held is None or held.win != win:  # a new minute: what the last one left ended with it
            held = self.held[counter] = _Held(win)
        held.last = time.monotonic()
        if held.free > 0:
            held.free -= 1
            return True
        if await store.take_counter(counter, win, size, limit, now=now, expires_at=expires_at) is not None:
            current = self.held.setdefault(counter, held)  # given back while the store answered: kept again
            if current.win == win:
                current.free += size - 1
                current.last = time.monotonic()
            self._wake.set()
            return True
        # not a whole block left: the last units one at a time, exactly
        return await store.take_counter(counter, win, 1, limit, now=now, expires_at=expires_at) is not None

    def keep(self, counter: str, win: float, limit: int) -> bool:
        """A running call's unit back into its block (calls at once); False when it is the store's to take."""
        held = self.held.get(counter)
        if self.block(limit) == 1 or held is None or held.win != win:
            return False
        held.free += 1
        held.last = time.monotonic()
        self._wake.set()
        return True

    async def give(self, store: Counters, counter: str, win: float, limit: int) -> None:
        """A running call's unit back: into its block, else to the store."""
        if not self.keep(counter, win, limit):
            await store.give_counter(counter, win, 1)

    async def run(self) -> None:
        """Give idle counters' unused units back to the store; all of them when cancelled (the hub stops)."""
        self.running = True
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self.held:
                    await anyio.sleep(IDLE / 2)
                    await self._give_back(IDLE)
        finally:
            self.running = False
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await self._give_back(0)

    async def _give_back(self, idle: float) -> None:
        store = self.store()
        now = time.monotonic()
        for counter, held in list(self.held.items()):
            if now - held.last < idle:
                continue
            free, held.free = held.free, 0
            if self.held.get(counter) is held:
                del self.held[counter]
            if free and store is not None:
                await store.give_counter(counter, held.win, free)
