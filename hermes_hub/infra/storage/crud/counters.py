"""The ``CounterStore`` part of both backends: the counters ``guards.limits`` share across replicas."""

from __future__ import annotations

from hermes_hub.infra.storage.crud.runner import Runner


class CounterMethods(Runner):
    async def take_counter(self, name: str, win: float, amount: int, limit: int, *, now: float,
                           expires_at: float) -> int | None:
        return await self._write(self._sql.counters.take_counter, name, win, amount, limit, now, expires_at)

    async def give_counter(self, name: str, win: float, amount: int) -> None:
        await self._write(self._sql.counters.give_counter, name, win, amount)

    async def read_counter(self, name: str, win: float, *, now: float) -> int:
        return await self._read(self._sql.counters.read_counter, name, win, now)

    async def prune_counters(self, *, now: float) -> int:
        return await self._write(self._sql.counters.prune_counters, now)
