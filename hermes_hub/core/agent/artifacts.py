"""Whole tool results kept for agent runs: the model reads a cut copy, the artifact keeps the rest.

    kept = await artifacts.keep(user_id, session_id, run_id, "files_read", text, "text/plain")
    page = await artifacts.page(user_id, kept.artifact_id, offset=4000, limit=4000)

An artifact is the caller's own (another user's id answers "not found", as a missing one does), goes with
the session that made it (the store cascades), and expires after ``artifacts.keep_days``: reads refuse
an expired one at once and the hub's hourly sweep deletes it (``prune``), as it prunes the audit.
A result longer than ``artifacts.max_chars`` keeps its first ``max_chars`` characters (``truncated``).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from hermes_hub.infra.config.sections import ArtifactsSection
from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import ArtifactRecord, utcnow
from hermes_hub.infra.storage.rows import artifact_not_found

PAGE = 4000  # characters of one page unless asked otherwise
MAX_PAGE = 20_000


class Artifacts:
    def __init__(self, store: Store, settings: ArtifactsSection) -> None:
        self.store, self.settings = store, settings

    async def keep(self, user_id: str, session_id: str, run_id: str, tool: str, text: str,
                   mime_type: str) -> ArtifactRecord:
        cap = self.settings.max_chars
        record = ArtifactRecord("art_" + secrets.token_urlsafe(12), user_id, session_id, run_id, tool, mime_type,
                                text[:cap], min(len(text), cap), utcnow(), truncated=len(text) > cap)
        await self.store.add_artifact(record)
        return record

    async def page(self, user_id: str, artifact_id: str, *, offset: int = 0, limit: int = PAGE) -> dict[str, Any]:
        """Characters ``offset`` to ``offset + limit`` of the artifact, and where the next page starts."""
        if not isinstance(offset, int) or offset < 0:
            raise InvalidInput(f"offset must be a whole number of characters from 0 (got {offset!r})")
        if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be from 1 to {MAX_PAGE:,} characters (got {limit!r})")
        found = await self.get(user_id, artifact_id, offset=offset, limit=limit)
        end = offset + len(found.text)
        return {"artifact_id": found.artifact_id, "tool": found.tool, "mime_type": found.mime_type,
                "offset": offset, "text": found.text, "next_offset": end if end < found.chars else None,
                "total_chars": found.chars, "truncated": found.truncated, "created_at": found.created_at.isoformat()}

    async def get(self, user_id: str, artifact_id: str, *, offset: int = 0, limit: int | None = None) -> ArtifactRecord:
        found = await self.store.get_artifact(user_id, artifact_id, offset=offset, limit=limit)
        if found.created_at < utcnow() - timedelta(days=self.settings.keep_days):
            raise artifact_not_found(artifact_id)  # expired: the sweep deletes it soon
        return found

    async def prune(self) -> int:
        """Delete every artifact older than ``keep_days``; how many were deleted."""
        return await self.store.prune_artifacts(utcnow() - timedelta(days=self.settings.keep_days))
