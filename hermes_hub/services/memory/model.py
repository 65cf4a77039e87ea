"""What memory tools take and return: the public shapes, and the checks on what people write."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.records import MemoryEvent, MemoryRecord

KINDS = ("fact", "preference", "event", "plan", "relationship", "note")
MAX_TEXT_CHARS = 4000
MAX_QUERY_CHARS = 4000
Source = Literal["memories", "sessions"]

# Text that tries to steer a model rather than state something about the person.
_INJECTION_RE = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|your|the)\b.{0,20}"
    r"\b(instructions?|rules?|prompts?|guidelines)\b"
    r"|\b(system prompt|developer message|you are now|new instructions?|jailbreak)\b"
    r"|忽略.{0,10}(之前|以上|所有|先前).{0,10}(指令|指示|规则|提示)",
    re.IGNORECASE | re.DOTALL,
)


class Memory(BaseModel):
    memory_id: str
    text: str
    kind: str
    confidence: float
    source: dict[str, Any]
    created_at: datetime
    event_time: datetime | None = None
    last_recalled_at: datetime | None = None
    recall_count: int = 0
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    state: str = "active"
    flags: list[str] = Field(default_factory=list)


class RecallItem(BaseModel):
    source: Literal["memory", "message"]
    memory_id: str | None = None
    message_id: str | None = None
    session_id: str | None = None
    text: str
    score: float
    created_at: datetime
    event_time: datetime | None = None
    superseded_by: str | None = None
    kind: str | None = None
    confidence: float | None = None  # a memory's: how sure its writer was
    role: str | None = None
    flags: list[str] = Field(default_factory=list)
    provenance: dict[str, Any] | None = None  # a memory's source messages: session_id, message_ids, at


class HistoryEntry(BaseModel):
    at: datetime
    action: str
    actor: str
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


def memory(rec: MemoryRecord) -> Memory:
    return Memory(memory_id=rec.id, text=rec.text, kind=rec.kind, confidence=rec.confidence, source=rec.source,
                  created_at=rec.created_at, event_time=rec.event_time, last_recalled_at=rec.last_recalled_at,
                  recall_count=rec.recall_count, superseded_by=rec.superseded_by, superseded_at=rec.superseded_at,
                  state=rec.state, flags=list(rec.flags))


def history_entry(e: MemoryEvent) -> HistoryEntry:
    return HistoryEntry(at=e.at, action=e.action, actor=e.actor, reason=e.reason, detail=e.detail)


MAX_SOURCES = 50  # source messages one memory names


def provenance(source: dict[str, Any]) -> dict[str, Any] | None:
    """Where a memory came from, when it names messages: ``{session_id, message_ids, at}``."""
    ids = source.get("message_ids") if isinstance(source, dict) else None
    if not ids:
        return None
    return {k: source[k] for k in ("session_id", "message_ids", "at") if source.get(k) is not None}


def check_source_ids(value: Any) -> list[str]:
    if (not isinstance(value, list) or not value or len(value) > MAX_SOURCES
            or not all(isinstance(v, str) and 0 < len(v) <= 100 for v in value)):
        raise InvalidInput(f"source_message_ids must be a list of 1 to {MAX_SOURCES} message ids (msg_…, from "
                           f"hermes_session_history), e.g. [\"msg_abc\"]")
    return list(dict.fromkeys(value))


def quoted(value: str, limit: int = 60) -> str:
    """``value`` for an error message: cut if long, with its size."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


def check_text(text: Any, what: str = "text", limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"{what} must be a non-empty string, e.g. 'I prefer charts to tables'")
    text = text.strip()
    if len(text) > limit:
        raise InvalidInput(f"{what} is {len(text):,} characters long; a memory holds at most {limit:,}. "
                           f"Keep one fact per memory and write several")
    return text


def check_kind(kind: Any) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"kind {quoted(str(kind))} is not one of {', '.join(KINDS)}")
    return kind


def parse_time(value: Any, what: str) -> datetime | None:
    """An ISO 8601 time (date alone, or date and time; no offset means UTC), or None."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise InvalidInput(f"{what} {quoted(str(value))} is not an ISO 8601 time; write e.g. '2026-05-07' or "
                       f"'2026-05-07T14:30:00+02:00'")


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def judge_json(answer: str) -> Any:
    """The JSON a judge model was asked to answer with (a ```json fence around it allowed); ``ValueError``
    saying what came instead when it is not JSON."""
    body = _FENCE.sub("", answer.strip())
    try:
        return json.loads(body)
    except json.JSONDecodeError as e:
        raise ValueError(f"the model's answer is not JSON ({e.msg}); it began {answer[:80]!r}") from e


def looks_like_injection(text: str) -> bool:
    """Text that addresses a model ("ignore previous instructions…") instead of stating a fact."""
    return _INJECTION_RE.search(text) is not None


def normalized(text: str) -> str:
    """The form two memories must share to be duplicates: case, spacing and end punctuation aside."""
    return " ".join(text.casefold().split()).rstrip(".!?。！？ ")
