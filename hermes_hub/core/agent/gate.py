"""How many agent runs execute at once in one hub (``agent.max_concurrent``), and who goes next.

    async with gate.slot(user_id, on_wait):   # on_wait(ahead) once when the run has to wait
        ...                                   # the run

A free slot is taken at once. Otherwise the run waits in its user's queue; a freed slot goes to the
users with waiting runs in turn (round robin), oldest run first within a user, so one person's burst
never starves another. A waiting run can be cancelled (its host cancels the call): it leaves its
queue, or hands on the slot it was handed in the same instant.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio


class RunGate:
    def __init__(self, limit: int | Callable[[], int]) -> None:
        self._limit = limit if callable(limit) else (lambda: limit)  # read at each turn: a reload's applies
        self.running = 0
        self._queues: OrderedDict[str, deque[anyio.Event]] = OrderedDict()  # users in turn order

    @property
    def limit(self) -> int:
        return self._limit()

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def counts(self) -> dict[str, int]:
        return {"running": self.running, "waiting": self.waiting, "max_concurrent": self.limit}

    @asynccontextmanager
    async def slot(self, user_id: str, on_wait: Callable[[int], Awaitable[None]]) -> AsyncIterator[None]:
        if self.running < self.limit and not self._queues:
            self.running += 1
        else:
            ticket = anyio.Event()
            ahead = self.waiting
            self._queues.setdefault(user_id, deque()).append(ticket)
            try:
                await on_wait(ahead)
                await ticket.wait()
            except BaseException:
                if ticket.is_set():  # handed a slot as it was cancelled: pass it on
                    self._release()
                else:
                    self._leave(user_id, ticket)
                raise
        try:
            yield
        finally:
            self._release()

    def _leave(self, user_id: str, ticket: anyio.Event) -> None:
        queue = self._queues.get(user_id)
        if queue is not None and ticket in queue:
            queue.remove(ticket)
            if not queue:
                del self._queues[user_id]

    def _release(self) -> None:
        if self._queues and self.running <= self.limit:
            user_id, queue = next(iter(self._queues.items()))
            ticket = queue.popleft()
            del self._queues[user_id]
            if queue:
                self._queues[user_id] = queue  # back of the turn order
            ticket.set()  # the slot passes on: ``running`` stays
        else:
            self.running -= 1
