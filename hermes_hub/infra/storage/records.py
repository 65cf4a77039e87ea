"""The rows a Store reads and writes: plain frozen dataclasses, the vocabulary every backend shares.

Times are timezone-aware UTC datetimes at this boundary; each backend picks its own column type.
The domain layers (``sessions``, ``audit``) turn these into their public pydantic models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
Outcome = Literal["ok", "tool_error", "timeout", "refused", "error"]
OUTCOMES: tuple[str, ...] = ("ok", "tool_error", "timeout", "refused", "error")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    user_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    summary: str = ""
    message_count: int = 0


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message about to be appended; the store assigns its ``seq``."""

    id: str
    role: str
    content: str
    created_at: datetime
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MessageRecord:
    id: str
    session_id: str
    user_id: str
    seq: int  # 1, 2, 3… within the session: the order of appends and the pagination key
    role: str
    content: str
    created_at: datetime
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchHit:
    message: MessageRecord
    session_title: str
    snippet: str  # matches wrapped in ** **, elided with …


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """An API token as stored: its hash, never the token itself."""

    id: str  # public handle for list/revoke, e.g. "tok_3fZ…"
    token_hash: str
    user_id: str
    role: str
    name: str
    created_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SealedRecord:
    """A secret of a user's, sealed by ``hermes_hub.services.vault``: the store never holds its plain text.

    ``kind`` says whose code reads it (``"oauth"``: a server's grant; ``"secret"``: a value a person set);
    ``key_id`` names the key that sealed it, so a replica with another key says so instead of failing
    to decrypt."""

    user_id: str
    kind: str
    name: str
    key_id: str
    sealed: bytes
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class LoginRecord:
    """A status-page login: the hash of its session id (the cookie), never the id itself, and the hash of
    the token it was opened with (the token decides, on every use, whether it still stands)."""

    id_hash: str
    token_hash: str
    user_id: str
    created_at: datetime
    seen_at: datetime


@dataclass(frozen=True, slots=True)
class OAuthGrantRecord:
    """What a person approved on the consent page: a client may act as this user on one endpoint."""

    id: str  # public handle for `token list` / `token revoke`, e.g. "oag_3fZ…"
    user_id: str
    role: str
    client_id: str
    client_name: str
    resource: str  # the endpoint's path the grant's tokens open, e.g. "/mcp/work"
    scopes: str  # space-separated
    created_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class OAuthTokenRecord:
    """A secret of the OAuth flow as stored: its hash, never itself. ``kind`` is ``request`` (a pending
    authorization, no grant yet), ``code``, ``access`` or ``refresh``; ``data`` is JSON (a request's or
    a code's parameters); ``used_at`` marks a code or refresh token spent (spent twice: a replay)."""

    token_hash: str
    kind: str
    grant_id: str | None
    client_id: str
    data: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class PinRecord:
    """The pinned definition of one downstream tool (server-wide, not per user: an admin's decision), and the
    changed definition a hub last saw in its place (``seen_*``, None while the server sends the pinned one)."""

    server: str
    tool: str  # the server's own name
    digest: str  # sha256 of the canonical definition (``hermes_hub.core.aggregation.pins``)
    definition: dict[str, Any]
    pinned_at: datetime
    pinned_by: str  # who pinned or approved it ("auto": the hub, on first sight)
    seen_digest: str | None = None
    seen_definition: dict[str, Any] | None = None
    seen_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class AuditRecord:
    at: datetime
    user_id: str
    tool: str  # the public tool name
    outcome: str
    duration_ms: float
    server: str | None = None
    session_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)  # already masked
    error: str | None = None
    result_size: int | None = None
    id: int | None = None  # assigned by the store
    run_id: str | None = None  # the agent run that made the call
    call_id: str | None = None  # the pipeline's id of the call (``hermes-hub audit --unmask CALL_ID``)


MEMORY_STATES: tuple[str, ...] = ("active", "archived")


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One long-term memory of one user. ``source`` says where it came from: ``{"type": "explicit"}``
    or ``{"type": "extracted", "session_id": …, "message_ids": […]}``."""

    id: str
    user_id: str
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
    flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """One decision that touched a memory: added, superseded, archived, restored, recalled in bulk…"""

    memory_id: str
    user_id: str
    at: datetime
    action: str
    actor: str  # "user:<id>", "judge:<model>", "archiver"
    reason: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RankedRow:
    """A lexical or vector match: the row's store key and its rank score (lower is better)."""

    pk: int
    score: float


@dataclass(frozen=True, slots=True)
class ExtractionJob:
    """A run of new messages of one session waiting for the memory judge."""

    id: int
    user_id: str
    session_id: str
    first_pk: int
    last_pk: int
    attempts: int


@dataclass(frozen=True, slots=True)
class SummaryJob:
    """A session whose older messages (``summary_upto`` < seq <= ``upto_seq``) wait to be folded into its summary."""

    session_id: str
    user_id: str
    upto_seq: int
    summary_upto: int  # what the stored summary already covers
    summary: str
    attempts: int


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One agent run: what was asked, how it ended, and its trace (a list of events)."""

    run_id: str
    user_id: str
    session_id: str
    profile: str
    task: str
    started_at: datetime
    ended_at: datetime
    stop_reason: str
    rounds: int
    input_tokens: int
    output_tokens: int
    answer: str
    trace: list[dict[str, Any]]
    rating: str | None = None
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    """A tool result kept whole for an agent run (the model read a cut copy). ``text`` is the whole text when
    stored; read back, the page asked for (``chars`` is always the whole length)."""

    artifact_id: str
    user_id: str
    session_id: str
    run_id: str
    tool: str
    mime_type: str  # application/json when the result was JSON, else text/plain
    text: str
    chars: int
    created_at: datetime
    truncated: bool = False  # the result was longer than artifacts.max_chars: only that much was kept


@dataclass(slots=True)
class Lease:
    """Proof of holding a session's lock; pass it to ``append_messages``. ``lost`` if a renewal failed."""

    session_id: str
    owner: str
    ttl: float
    lost: bool = False


@dataclass(frozen=True, slots=True)
class EvalCaseRecord:
    """A case of a user's evaluation set (issue 21), made from a run they rated down; ``case`` is its JSON."""

    case_id: str
    user_id: str
    run_id: str
    created_at: datetime
    case: dict[str, Any]
