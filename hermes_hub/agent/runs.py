"""A stored agent run as people and hosts read it: a one-line summary, or the whole trace round by round.
Shared by the trace tools, the status page and ``hermes-hub traces``, so it lives beside the agent."""

from __future__ import annotations

from typing import Any

from hermes_hub.storage.records import RunRecord


def run_summary(r: RunRecord) -> dict[str, Any]:
    return {"run_id": r.run_id, "session_id": r.session_id, "profile": r.profile, "task": r.task[:200],
            "started_at": r.started_at.isoformat(), "seconds": round((r.ended_at - r.started_at).total_seconds(), 3),
            "stop_reason": r.stop_reason, "rounds": r.rounds, "rating": r.rating}


def run_trace(r: RunRecord) -> dict[str, Any]:
    return {**run_summary(r), "task": r.task, "answer": r.answer, "comment": r.comment,
            "usage": {"input_tokens": r.input_tokens, "output_tokens": r.output_tokens}, "events": r.trace}
