"""The ``ArtifactStore`` part of both backends: whole tool results of agent runs, read page by page."""

from __future__ import annotations

from datetime import datetime

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import ArtifactRecord


class ArtifactMethods(Runner):
    async def add_artifact(self, record: ArtifactRecord) -> None:
        await self._write(self._sql.artifacts.add_artifact, record)

    async def get_artifact(self, user_id: str, artifact_id: str, *, offset: int = 0,
                           limit: int | None = None) -> ArtifactRecord:
        return await self._read(self._sql.artifacts.get_artifact, user_id, artifact_id, offset, limit)

    async def prune_artifacts(self, before: datetime) -> int:
        return await self._write(self._sql.artifacts.prune_artifacts, before)

    async def artifact_counts(self, user_id: str | None) -> dict[str, int]:
        return await self._read(self._sql.artifacts.artifact_counts, user_id)
