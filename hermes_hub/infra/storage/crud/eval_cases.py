"""The ``EvalCaseStore`` part of both backends: cases of a user's evaluation set, made from runs rated down."""

from __future__ import annotations

from hermes_hub.infra.storage.crud.runner import Runner
from hermes_hub.infra.storage.records import EvalCaseRecord


class EvalCaseMethods(Runner):
    async def put_eval_case(self, record: EvalCaseRecord) -> None:
        await self._write(self._sql.eval_cases.put_eval_case, record)

    async def list_eval_cases(self, user_id: str) -> list[EvalCaseRecord]:
        return await self._read(self._sql.eval_cases.list_eval_cases, user_id)
