"""The ``OAuthUpkeepStore`` part of both backends: pruning clients never used, counting what is kept."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner


class OAuthUpkeepMethods(Runner):
    async def prune_oauth_clients(self, *, unused_before: datetime) -> int:
        return await self._write(self._sql.oauth_upkeep.prune_oauth_clients, unused_before)

    async def oauth_counts(self, *, at: datetime) -> dict[str, int]:
        return await self._read(self._sql.oauth_upkeep.oauth_counts, at)
