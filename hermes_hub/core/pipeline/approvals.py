"""The book of approvals: pending ones in the store, so any replica, the status page and the CLI can
answer them, and the calls of this process that wait for an answer.

    book = Approvals(get_store, audit_action)
    record = await book.open(caller, tool, server, arguments, timeout=300)
    Preview.of_json(record.preview).text()   # every argument, masked and shortened (``preview``)
    await book.decide(record.id, Identity("ana"), approve=True, via="cli")   # anyone else: NotFound
    record = await book.wait(record)       # answered here, elsewhere, or expired (bounded by the expiry)
    spent = await book.use(caller, tool, digest_of(arguments), record.id)   # once, for exactly that call

An approval is bound to the caller (user and role), the public tool name, the sha256 of the arguments'
canonical JSON and an expiry; the store's conditional updates name all of them (``storage.approvals``),
so no answer can move another identity's approval and no yes can run other arguments or another tool.
Every decision (approved, denied, expired) is an audit row naming who made it and through which path.

``parked`` holds the calls of this process waiting out of band: each has the approval's id and a
``done`` event set when its answer arrives. That is the seam for a host that speaks tasks: a task can
watch ``parked[id]`` instead of holding its request open.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import anyio

from hermes_hub.infra.call import Identity
from hermes_hub.infra.errors import NotFound
from hermes_hub.infra.masking import MASKER, Masker
from hermes_hub.core.pipeline.preview import Preview, Unshowable, whole
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.approvals import APPROVED, DENIED, EXPIRED, PENDING, ApprovalRecord
from hermes_hub.infra.storage.records import utcnow

log = logging.getLogger("hermes_hub.approvals")
POLL_SECONDS = 1.0  # how often a waiting call looks at the store (an answer from another replica or the CLI)
MAX_ARGUMENT_CHARS = 1_000_000  # hashed on the loop below this, in a worker thread above
THREAD_CHARS = 64_000  # arguments masked and checked for their preview on the loop below this
Auditor = Callable[[Identity, str, dict[str, Any]], AbstractAsyncContextManager[Any]]


def canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


async def digest_of(arguments: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``arguments`` (key order and spacing do not matter)."""
    text = canonical(arguments)
    if len(text) > MAX_ARGUMENT_CHARS:
        return await anyio.to_thread.run_sync(lambda: hashlib.sha256(text.encode()).hexdigest())
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Parked:
    """A call of this process waiting for an out-of-band answer."""

    record: ApprovalRecord
    done: anyio.Event = field(default_factory=anyio.Event)


class Approvals:
    def __init__(self, store: Callable[[], Store], auditor: Auditor | None = None, masker: Masker = MASKER) -> None:
        self._store, self._auditor, self.masker = store, auditor, masker
        self.parked: dict[str, Parked] = {}

    @property
    def store(self) -> Store:
        return self._store()

    async def open(self, caller: Identity, tool: str, server: str, arguments: dict[str, Any], *,
                   timeout: float, digest: str | None = None) -> ApprovalRecord:
        """A new pending approval of ``caller``'s call of ``tool`` with ``arguments``, for ``timeout`` seconds;
        ``Unshowable`` (nothing stored) when the call cannot be shown in full to the person who answers."""
        stored = await self.shown(arguments)
        now = utcnow()
        record = ApprovalRecord(
            id=f"apr_{secrets.token_urlsafe(12)}", user_id=caller.user_id, role=caller.role, tool=tool, server=server,
            digest=digest or await digest_of(arguments), preview=stored, state=PENDING,
            created_at=now, expires_at=now + timedelta(seconds=timeout))
        await self.store.add_approval(record)
        return record

    async def shown(self, arguments: dict[str, Any]) -> str:
        """The call as its approval keeps it: the arguments masked, whole (``preview.whole``), once checked that
        the preview can show every one of them (``Preview.of``, else ``Unshowable``)."""
        def masked() -> str:
            value = self.masker(arguments)
            Preview.of(value)
            return whole(value)

        if len(canonical(arguments)) > THREAD_CHARS:
            return await anyio.to_thread.run_sync(masked)
        return masked()

    async def decide(self, approval_id: str, by: Identity, *, approve: bool, via: str) -> ApprovalRecord:
        """``by``'s answer to their own pending approval; ``NotFound`` for anyone else's, an answered or an
        expired one (all alike, so an id tells nothing to whoever holds it)."""
        decided = await self.store.decide_approval(approval_id, by.user_id, by.role, APPROVED if approve else DENIED,
                                                   by=by.user_id, via=via, at=utcnow())
        if decided is None:
            raise NotFound("pending approval", approval_id, "it was answered already, it expired, or it is not "
                                                            "yours (only the caller it is for may answer it)")
        await self._audit(by, decided)
        self._wake(decided)
        return decided

    async def expire(self, record: ApprovalRecord) -> ApprovalRecord:
        """Mark ``record`` expired if nobody answered it in time; the record as it stands otherwise."""
        owner = Identity(record.user_id, record.role)
        expired = await self.store.decide_approval(record.id, owner.user_id, owner.role, EXPIRED, by="",
                                                   via="timeout", at=utcnow())
        if expired is None:
            return await self.store.get_approval(record.id) or record
        await self._audit(owner, expired)
        self._wake(expired)
        return expired

    async def wait(self, record: ApprovalRecord) -> ApprovalRecord:
        """The record once answered (here, on another replica, from the CLI) or expired."""
        parked = self.parked.setdefault(record.id, Parked(record))
        try:
            while True:
                left = (record.expires_at - utcnow()).total_seconds()
                if left <= 0:
                    return await self.expire(record)
                with anyio.move_on_after(min(POLL_SECONDS, left)):
                    await parked.done.wait()
                found = await self.store.get_approval(record.id)
                if found is not None and found.state != PENDING:
                    return found
        finally:
            self.parked.pop(record.id, None)

    async def use(self, caller: Identity, tool: str, digest: str, approval_id: str | None = None,
                  ) -> ApprovalRecord | None:
        """Spend a yes bound to exactly this caller, tool and digest (that id only, when given)."""
        return await self.store.use_approval(caller.user_id, caller.role, tool, digest, utcnow(), approval_id)

    async def grant(self, caller: Identity, tool: str, server: str, arguments: dict[str, Any], *, via: str,
                    timeout: float = 60.0) -> ApprovalRecord | None:
        """A yes the caller already gave another way (the agent's own confirmation), for the step to spend;
        None for a call that cannot be shown (the step refuses it, saying why)."""
        try:
            record = await self.open(caller, tool, server, arguments, timeout=timeout)
        except Unshowable:
            return None
        return await self.decide(record.id, caller, approve=True, via=via)

    async def pending(self, caller: Identity) -> list[ApprovalRecord]:
        """``caller``'s approvals waiting for an answer now, newest first."""
        return await self.store.list_approvals(caller.user_id, caller.role, pending_at=utcnow())

    async def seen_by(self, approval_id: str, viewer: Identity, *, admin: bool) -> ApprovalRecord:
        """Approval ``approval_id`` for ``viewer`` to read in full: their own, or any for an admin; ``NotFound``
        otherwise, as for an id that never existed (reading answers nothing: answering names the role too)."""
        record = await self.store.get_approval(approval_id[:64])
        if record is None or not admin and record.user_id != viewer.user_id:
            raise NotFound("approval", approval_id[:64], "`hermes-hub approvals` lists your pending ones (only "
                                                          "the caller it is for, or an admin, may read one)")
        return record

    def _wake(self, record: ApprovalRecord) -> None:
        if (parked := self.parked.get(record.id)) is not None:
            parked.done.set()

    async def _audit(self, by: Identity, record: ApprovalRecord) -> None:
        if self._auditor is None:
            return
        arguments = {"approval": record.id, "tool": record.tool, "server": record.server, "for": record.user_id,
                     "by": record.decided_by or "nobody", "via": record.decided_via}
        async with self._auditor(by, f"approval_{record.state}", arguments):
            pass
        log.info("approval %s of %s for %s: %s by %s via %s", record.id, record.tool, record.user_id, record.state,
                 record.decided_by or "nobody", record.decided_via)

