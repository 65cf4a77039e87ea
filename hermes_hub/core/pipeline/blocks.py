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

A counter refills one block at a time (the callers that found it empty wait for that refill and share
it), and a busy one writes to the store at least every ``REFRESH`` seconds, so the store's row never
expires under it. A block taken under one limit is never handed out under another (``hub.reload``
changed it) nor in another window: its spare units go back first. Store work is shielded, so a
cancelled caller or a stopping hub never leaves a block counted in the store and lost here; a give-back
that fails is kept and tried again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio

PARTS = 64  # a block is this share of the limit
IDLE = 0.25  # seconds a counter's unused units stay here after its last take or give
REFRESH = 60.0  # seconds a counter serving from its block goes without a store write, at most
STORE_BOUND = 10.0  # seconds one store write of the counters may take (shielded) before the call is refused
log = logging.getLogger("hermes_hub.core.pipeline")


class Counters(Protocol):
    """What blocks need of the store (``hermes_hub.infra.storage.crud.counters``)."""

    async def take_counter(self, name: str, win: float, amount: int, limit: int, *, now: float,
                           expires_at: float) -> int | None: ...
    async def give_counter(self, name: str, win: float, amount: int) -> None: ...


@dataclass
class _Held:
    win: float  # the counter's window (a minute's start; 0 for calls at once)
    limit: int  # the limit its block was taken under
    free: int = 0  # units the store counts as taken that no call uses
    last: float = 0.0  # monotonic time of the last take or give
    written: float = 0.0  # the limits' clock at the last store write that took units (or refreshed the row)
    refill: anyio.Lock = field(default_factory=anyio.Lock)


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
        held = self.held.get(counter)
        if size > 1 and held is not None and (held.win, held.limit) != (win, limit):
            if win < held.win:  # a late call of the minute before: counted exactly, the new block stays
                size = 1
            else:  # a new minute, or a limit changed by a reload: the old block's spare units go back first
                await self._release(store, counter, held)
                held = None
        if size == 1:
            return await self._store_take(store, counter, win, 1, limit, now, expires_at) is not None
        if held is None:
            held = self.held[counter] = _Held(win, limit)
        held.last = time.monotonic()
        if held.free > 0 and now - held.written < REFRESH:
            held.free -= 1
            return True
        async with held.refill:  # one refill at a time: those who waited share it
            if held.free > 0:
                if now - held.written >= REFRESH:  # keep the store's row from expiring (a take of nothing)
                    if await self._store_take(store, counter, win, 0, limit, now, expires_at) is not None:
                        held.written = now
                held.free -= 1
                return True
            got = await self._store_take(store, counter, win, size, limit, now, expires_at)
            if got is None:  # not a whole block left: the last units one at a time, exactly
                return await self._store_take(store, counter, win, 1, limit, now, expires_at) is not None
            held.written = now
            if self.running and self.held.get(counter) is held:
                held.free += size - 1
                self._wake.set()
            else:  # the hub stopped, or the block went back, while the store answered
                await self._store_give(store, counter, win, size - 1)
            return True

    def keep(self, counter: str, win: float, limit: int) -> bool:
        """A running call's unit back into its block (calls at once); False when it is the store's to take."""
        held = self.held.get(counter)
        if self.block(limit) == 1 or held is None or (held.win, held.limit) != (win, limit):
            return False
        held.free += 1
        held.last = time.monotonic()
        self._wake.set()
        return True

    async def give(self, store: Counters, counter: str, win: float, limit: int) -> None:
        """A running call's unit back: into its block, else to the store."""
        if not self.keep(counter, win, limit):
            await self._store_give(store, counter, win, 1)

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
            with anyio.CancelScope(shield=True), anyio.move_on_after(STORE_BOUND):
                await self._give_back(0)

    async def _give_back(self, idle: float) -> None:
        store = self.store()
        now = time.monotonic()
        for counter, held in list(self.held.items()):
            if now - held.last >= idle and store is not None:
                await self._release(store, counter, held)

    async def _release(self, store: Counters, counter: str, held: _Held) -> None:
        """``held`` leaves; its spare units go back to the store (kept for the next round if that fails)."""
        free, held.free = held.free, 0
        if self.held.get(counter) is held:
            del self.held[counter]
        if free and not await self._store_give(store, counter, held.win, free):
            back = self.held.setdefault(counter, _Held(held.win, held.limit, last=held.last))
            if (back.win, back.limit) == (held.win, held.limit):
                back.free += free

    async def _store_take(self, store: Counters, counter: str, win: float, amount: int, limit: int, now: float,
                          expires_at: float) -> int | None:
        """The store's take, finished even if the caller is cancelled meanwhile; None (refused) if the store
        does not answer within ``STORE_BOUND``: a limit fails closed."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(STORE_BOUND):
            return await store.take_counter(counter, win, amount, limit, now=now, expires_at=expires_at)
        log.warning("the limits' counters did not answer within %gs; the call is refused", STORE_BOUND)
        return None

    async def _store_give(self, store: Counters, counter: str, win: float, amount: int) -> bool:
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(STORE_BOUND):
                await store.give_counter(counter, win, amount)
                return True
        except Exception:  # noqa: BLE001 - kept here and given back on the next round
            log.exception("could not give %d unit(s) of counter %s back to the store", amount, counter)
        return False
