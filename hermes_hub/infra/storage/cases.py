"""The store's part for evaluation cases (issue 21): each user's set, made from the runs they rated down."""

from __future__ import annotations

from typing import Protocol

from hermes_hub.infra.storage.records import EvalCaseRecord


class EvalCaseStore(Protocol):
    async def put_eval_case(self, record: EvalCaseRecord) -> None:
        """Add the case, or replace the one made from the same run."""

    async def list_eval_cases(self, user_id: str) -> list[EvalCaseRecord]:
        """The user's cases, oldest first."""
