"""Pending approvals in the store (``guards.approve``, ``hermes_hub.core.pipeline.approval``): the record, its
row mapping (both dialects keep the same columns) and the ``ApprovalStore`` protocol.

An approval is bound by its key columns, ``user_id``, ``role``, ``tool`` and ``digest`` (sha256 of the
call's canonical arguments), and by ``expires_at``. Every transition is one conditional UPDATE that names
the whole binding, so an answer can only move the row of the identity it comes from, while it is pending
and unexpired; a yes is spent once, by a call with the same tool and arguments.

    pending -> approved -> used        (a person said yes; the call ran)
    pending -> denied | expired        (a person said no; nobody answered in time)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

PENDING, APPROVED, DENIED, EXPIRED, USED = "pending", "approved", "denied", "expired", "used"
STATES = (PENDING, APPROVED, DENIED, EXPIRED, USED)
APPROVAL_COLS = ("id, user_id, role, tool, server, digest, preview, state, created_at, expires_at, decided_by, "
                 "decided_via, decided_at")


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    id: str
    user_id: str  # the caller the approval is for: only they may answer it
    role: str
    tool: str  # the public tool name
    server: str
    digest: str  # sha256 of the arguments' canonical JSON
    preview: str  # the arguments, masked and whole (JSON): the preview and `approvals show` read it (pipeline.preview)
    state: str
    created_at: datetime
    expires_at: datetime
    decided_by: str | None = None  # who answered ("" for an expiry)
    decided_via: str | None = None  # elicitation, input_required, status_page, cli, agent, timeout
    decided_at: datetime | None = None


def approval_values(r: ApprovalRecord) -> tuple[Any, ...]:
    return (r.id, r.user_id, r.role, r.tool, r.server, r.digest, r.preview, r.state, r.created_at.timestamp(),
            r.expires_at.timestamp(), r.decided_by, r.decided_via, None if r.decided_at is None else
            r.decided_at.timestamp())


def approval_record(row: tuple[Any, ...]) -> ApprovalRecord:
    def when(value: float | None) -> datetime | None:
        return None if value is None else datetime.fromtimestamp(value, UTC)

    return ApprovalRecord(*row[:8], when(row[8]), when(row[9]), row[10], row[11], when(row[12]))  # type: ignore[arg-type]


class ApprovalStore(Protocol):
    """Approvals of tool calls; every change names the identity it is for (see the module docstring)."""

    async def add_approval(self, record: ApprovalRecord) -> None: ...

    async def get_approval(self, approval_id: str) -> ApprovalRecord | None: ...

    async def decide_approval(self, approval_id: str, user_id: str, role: str, state: str, *, by: str, via: str,
                              at: datetime) -> ApprovalRecord | None:
        """Move ``approval_id`` of ``user_id``/``role`` from pending to ``state`` (approved, denied: only before
        it expires; expired: only after); None when no such pending row exists for that identity."""

    async def use_approval(self, user_id: str, role: str, tool: str, digest: str, at: datetime,
                           approval_id: str | None = None) -> ApprovalRecord | None:
        """Spend one unexpired yes bound to exactly this caller, tool and digest (``approval_id``: that one only)."""

    async def list_approvals(self, user_id: str, role: str, *, pending_at: datetime | None = None,
                             limit: int = 50) -> list[ApprovalRecord]:
        """The identity's approvals, newest first (``pending_at``: only those still pending then)."""
