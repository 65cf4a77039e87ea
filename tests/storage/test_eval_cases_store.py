"""The EvalCaseStore part of the contract, on every backend: each user's cases only, oldest first, and
one case per run (rating it down again replaces it)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import EvalCaseRecord, utcnow

pytestmark = pytest.mark.anyio


async def test_a_users_cases_read_back_oldest_first_one_per_run_and_never_another_users(store: Store):
    now = utcnow()
    await store.put_eval_case(EvalCaseRecord("mine-run_b", "alice", "run_b", now, {"id": "mine-run_b", "task": "b"}))
    await store.put_eval_case(EvalCaseRecord("mine-run_a", "alice", "run_a", now - timedelta(minutes=1),
                                             {"id": "mine-run_a", "task": "日程"}))
    await store.put_eval_case(EvalCaseRecord("mine-run_a", "alice", "run_a", now - timedelta(seconds=30),
                                             {"id": "mine-run_a", "task": "日程 again"}))
    await store.put_eval_case(EvalCaseRecord("mine-run_c", "bob", "run_c", now, {"id": "mine-run_c", "task": "c"}))
    alice = await store.list_eval_cases("alice")
    assert [(r.case_id, r.case["task"]) for r in alice] == [("mine-run_a", "日程 again"), ("mine-run_b", "b")]
    assert [r.case_id for r in await store.list_eval_cases("bob")] == ["mine-run_c"]
    assert await store.list_eval_cases("carol") == []
