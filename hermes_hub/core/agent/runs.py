"""A stored agent run as people and hosts read it: a one-line summary, or the whole trace round by round.
Shared by the trace tools, the status page and ``hermes-hub traces``, so it lives beside the agent."""

from __future__ import annotations

from typing import Any

from hermes_hub.infra.storage.records import RunRecord


def run_summary(r: RunRecord) -> dict[str, Any]:
    return {"run_id": r.run_id, "session_id": r.session_id, "profile": r.profile, "task": r.task[:200],
            "started_at": r.started_at.isoformat(), "seconds": round((r.ended_at - r.started_at).total_seconds(), 3),
            "stop_reason": r.stop_reason, "rounds": r.rounds, "rating": r.rating}


PROMPT_KEYS = ("prompt", "response")  # what each model request held and returned (``prompts.py``)


def run_trace(r: RunRecord, *, prompt: bool = False) -> dict[str, Any]:
    """The run round by round; ``prompt``: with what each model request contained and what came back."""
    events = r.trace if prompt else [{k: v for k, v in e.items() if k not in PROMPT_KEYS} for e in r.trace]
    return {**run_summary(r), "task": r.task, "answer": r.answer, "comment": r.comment,
            "usage": {"input_tokens": r.input_tokens, "output_tokens": r.output_tokens}, "events": events}


def prompt_lines(trace: dict[str, Any]) -> list[str]:
    """``run_trace(r, prompt=True)`` as a person reads it: each model request, then what the model answered."""
    out: list[str] = []
    requests = [e for e in trace["events"] if e.get("kind") == "request" and "prompt" in e]
    for n, e in enumerate(requests, start=1):
        p = e["prompt"]
        out.append(f"request {n} (round {e.get('round')}, {e.get('provider')}, {e.get('input_tokens', '?')} input "
                   f"tokens)")
        out.append(f"  instructions ({p.get('instructions_chars', 0):,} characters):")
        out += [f"    {line}" for line in str(p.get("instructions", "")).splitlines()]
        tools = p.get("tools")
        out.append("  tools: " + (tools if isinstance(tools, str) else
                                  ", ".join(f"{t['name']} ({t['chars']:,} chars)" for t in tools) or "none"))
        before = p.get("messages_before", 0)
        out.append(f"  messages: the {before} of the request before, then:" if before else "  messages:")
        for m in p.get("messages", []):
            label = m["role"] + (f" {m['tool_call_id']}" if m.get("tool_call_id") else "")
            calls = f" (calls {', '.join(m['tool_calls'])})" if m.get("tool_calls") else ""
            text = m.get("content", f"({m['chars']:,} characters, not kept: the request was over the trace's cap)")
            out.append(f"    [{label}]{calls} {text}")
        r = e.get("response")
        if r is None:
            out.append(f"  error: {e.get('error', '')}")
            continue
        if r.get("reasoning"):
            out.append(f"  reasoning: {r['reasoning']}")
        out.append(f"  answer ({r.get('finish')}): {r.get('text', '')}")
        for c in r.get("tool_calls", []):
            out.append(f"  calls {c['name']} {c['arguments']}")
    return out or ["(this run's trace has no recorded requests: it ran before prompts were kept)"]
