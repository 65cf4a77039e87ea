"""A run a person rated down, as a case of their evaluation set (``hermes_feedback`` with rating down,
or ``hermes-hub eval add RUN_ID``): its task and profile, the conversation before it (user and assistant
turns), and the comment as the case's note. It must answer, and not with the answer rated down.

    await keep_case(store, user_id, run_id)      # the case's JSON, also stored
    [r.case for r in await store.list_eval_cases(user_id)]
"""

from __future__ import annotations

from typing import Any

from hermes_hub.services.evaluation.cases import parse_cases
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import EvalCaseRecord, MessageRecord, RunRecord, utcnow

HISTORY = 20  # turns before the run a case keeps


def case_from_run(run: RunRecord, before: list[MessageRecord]) -> dict[str, Any]:
    history = [{"role": m.role, "content": m.content[:20_000]} for m in before[-HISTORY:]
               if m.role in ("user", "assistant") and m.content.strip()]
    case = {"id": f"mine-{run.run_id}", "task": run.task, "profile": run.profile, "history": history,
            "expect": {"stop_reason": "answered", "differs_from": run.answer},
            "note": run.comment or "rated down", "tags": ["mine"]}
    parse_cases({"cases": [case]}, f"run {run.run_id}")  # a case that would not load is never stored
    return case


async def keep_case(store: Store, user_id: str, run_id: str) -> dict[str, Any]:
    """Make the case of ``run_id`` (the caller's; NotFound otherwise) and store it in their set."""
    run = await store.get_run(user_id, run_id)
    newest = await store.list_messages(user_id, run.session_id, limit=200, newest_first=True)
    before = [m for m in reversed(newest)
              if (m.metadata or {}).get("run_id") != run_id and m.created_at <= run.started_at]
    case = case_from_run(run, before)
    await store.put_eval_case(EvalCaseRecord(case["id"], user_id, run_id, utcnow(), case))
    return case
