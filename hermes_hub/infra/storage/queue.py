"""The loop that works through a durable queue in the store (memory extraction, session summaries).

    class Summarizer(QueueWorker):
        async def step(self) -> bool: ...   # claim one job, do it, finish it; False when idle

``run()`` steps until the queue is empty, then sleeps until ``wake()`` or ``IDLE_POLL`` seconds (a
job scheduled by another process is picked up within that); ``wait_idle()`` returns once it has caught
up. A failed step is logged and retried: the job stays in the queue, so nothing acknowledged is lost. ``while_held`` keeps a job's lease alive
while slow work (a model call) runs, so a live worker's job is never taken over.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")
IDLE_POLL = 2.0


class QueueWorker:
    name = "queue"
    idle_poll = IDLE_POLL

    def __init__(self) -> None:
        self.error: str | None = None  # the last failure, for status; None once a job succeeds
        self._wake = anyio.Event()
        self._steps = 0  # steps ``run`` has begun
        self._idle_step = 0  # the last of them that found nothing to do
        self._went_idle = anyio.Event()  # set (and replaced) each time one does

    async def step(self) -> bool:
        raise NotImplementedError

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        while True:
            self._steps += 1
            begun = self._steps
            try:
                busy = await self.step()
            except Exception as e:  # noqa: BLE001 - the job stays queued and is tried again
                self.failed(e)
                busy = False
            if not busy:
                self._idle_step = begun
                self._went_idle.set()
                self._went_idle = anyio.Event()
                with anyio.move_on_after(self.idle_poll):
                    await self._wake.wait()
                self._wake = anyio.Event()

    def failed(self, error: Exception) -> None:
        """A step raised ``error`` (called in its ``except``: re-raise to end ``run``)."""
        logging.getLogger("hermes_hub.worker").exception("%s step failed", self.name)

    async def wait_idle(self) -> None:
        """Return once a step of ``run`` begun after this call found nothing to do: everything queued
        before the call is done, failed, or held by another worker. Callers bound it (``fail_after``).

            with anyio.fail_after(30):
                await hub.memories.indexer.wait_idle()
        """
        after = self._steps
        while self._idle_step <= after:
            went_idle = self._went_idle
            self.wake()  # skip the idle sleep: look at the queue now
            await went_idle.wait()

    async def drain(self) -> None:
        """Do everything waiting now (tests, benchmarks)."""
        while await self.step():
            pass


async def while_held(renew: Callable[[], Awaitable[bool]], lease: float, work: Callable[[], Awaitable[T]]) -> T:
    """``await work()`` while renewing a lease of ``lease`` seconds every third of it."""
    async def beat() -> None:
        while True:
            await anyio.sleep(lease / 3)
            await renew()

    outcome: list[tuple[bool, object]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(beat)
        try:
            outcome.append((True, await work()))
        except Exception as e:  # noqa: BLE001 - re-raised below, outside the task group
            outcome.append((False, e))
        finally:
            tg.cancel_scope.cancel()
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
