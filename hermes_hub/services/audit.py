"""The audit trail: one row per tool call through the hub, written by one wrapper.

    async with audit.record(store, user_id="alice", tool="calendar_query", server="calendar",
                            session_id=sid, arguments=args) as rec:
        result = await call(...)
        rec.result_size = len(payload)
        if result.isError:
            rec.tool_error(first_text(result))

The row (time, user, session, public tool name, server, masked arguments, outcome, error text,
duration, result size) is written when the block ends, also when it raises or is cancelled: an
exception sets the outcome (``TimeoutError`` → timeout, ``Forbidden``/``SessionBusy`` → refused,
``NotFound``/``InvalidInput`` → tool_error, anything else → error) and propagates unchanged.
A failed audit write is logged and never fails the call it describes; through an ``AuditWriter`` the
row stays queued and is written once the store takes it.

Arguments are masked before they are stored (``hermes_hub.infra.masking``: values under secret-looking keys,
well-known key formats and "my password is …" phrases in strings, the configured patterns), and
strings past ``MAX_STRING`` are cut; so is the error text, which may quote them. The call itself gets
the arguments as they were.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import anyio
from pydantic import BaseModel

from hermes_hub.infra.errors import Forbidden, InvalidInput, NotFound, SessionBusy
from hermes_hub.infra.masking import MASKER, Masker
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import AuditRecord, utcnow

log = logging.getLogger(__name__)
MAX_STRING = 1000  # longer argument strings are cut: the audit is a record, not a copy of the data
MAX_ERROR = 2000
WRITE_TIMEOUT = 5.0


@dataclass
class Recording:
    """What the wrapped call reports about itself; ``record`` fills the rest."""

    outcome: str = "ok"
    error: str | None = None
    result_size: int | None = None
    call_id: str | None = None  # the pipeline's id of the call (``hermes_hub.core.pipeline.Call``)

    def tool_error(self, text: str) -> None:
        """The call returned an error result (``isError``) rather than raising."""
        self.outcome, self.error = "tool_error", text

    def refused(self, text: str) -> None:
        self.outcome, self.error = "refused", text


def classify(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return "error", "cancelled"
    if isinstance(exc, TimeoutError):
        return "timeout", str(exc) or "timed out"
    if isinstance(exc, (Forbidden, SessionBusy)):
        return "refused", str(exc)
    if isinstance(exc, (NotFound, InvalidInput)):
        return "tool_error", str(exc)
    return "error", f"{type(exc).__name__}: {exc}"


class AuditWriter:
    """Writes audit rows in the background, in batches, so a call never waits for the disk.

    Rows reach the database within ``interval`` seconds; ``flush()`` writes what is pending now
    (readers of the audit call it first), and the owner flushes once more when it stops. Each
    batch costs a thread hop and a transaction: at 0.05 s that was ~7% of the hub's CPU per call
    under steady load (bench/README.md), at 0.25 s it is lost in the noise.

    A batch the store refuses (locked, full, failing) stays queued, ahead of newer rows, and is
    written by a later flush, retried with back-off from ``interval`` up to ``MAX_BACKOFF``; a slow
    store only delays the rows, since the background write is never cut short. A batch is one
    transaction, so a retry never writes a row twice. Rows are lost only when the hub's process
    dies with rows queued, when its last flush on stopping fails, or past ``MAX_PENDING`` queued
    rows (the oldest go first); each loss is logged and counted in ``dropped`` (docs/security.md).
    """

    MAX_PENDING = 100_000
    MAX_BACKOFF = 30.0

    def __init__(self, store: Store, interval: float = 0.25) -> None:
        self.store, self.interval = store, interval
        self._pending: list[AuditRecord] = []
        self._wake = anyio.Event()
        self._lock = anyio.Lock()
        self.failures = 0  # flushes refused by the store in a row
        self.dropped = 0  # rows lost, each logged

    def submit(self, row: AuditRecord) -> None:
        self._pending.append(row)
        if len(self._pending) > self.MAX_PENDING:
            self._drop(len(self._pending) - self.MAX_PENDING, "the queue is full")
        self._wake.set()

    @property
    def pending(self) -> int:
        """Rows submitted and not written yet (a queue depth in /metrics)."""
        return len(self._pending)

    async def flush(self, timeout: float | None = None) -> bool:
        """Write every queued row in one transaction; False when the store refused them or ``timeout``
        passed first: they stay queued for the next flush."""
        async with self._lock:
            batch, self._pending = self._pending, []
            if not batch:
                return True
            written = False
            with anyio.CancelScope(shield=True), anyio.move_on_after(timeout if timeout is not None else float("inf")):
                try:
                    await self.store.add_audits(batch)
                    written = True
                except Exception as exc:  # noqa: BLE001 - kept and retried; the reason is logged
                    log.error("could not write %d audit rows (%s: %s); kept for the next try",
                              len(batch), type(exc).__name__, exc)
            if written:
                self.failures = 0
                return True
            self._pending[:0] = batch  # ahead of rows submitted meanwhile, in call order
            self.failures += 1
            if len(self._pending) > self.MAX_PENDING:
                self._drop(len(self._pending) - self.MAX_PENDING, "the store refused them too long")
            return False

    async def close(self, timeout: float = WRITE_TIMEOUT) -> None:
        """The owner's last flush when it stops: rows the store still refuses then are lost, and said so."""
        if not await self.flush(timeout) and self._pending:
            self._drop(len(self._pending), "the hub stopped while the store refused them")

    def _drop(self, count: int, why: str) -> None:
        del self._pending[:count]
        self.dropped += count
        log.error("dropped %d audit rows: %s", count, why)

    async def run(self) -> None:
        """Until cancelled; the final flush is the owner's (``close()`` after cancelling)."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.sleep(min(self.interval * 2 ** self.failures, self.MAX_BACKOFF))  # gather a batch
            if not await self.flush():
                self._wake.set()  # try again after the back-off


@asynccontextmanager
async def unrecorded() -> AsyncIterator[Recording]:
    """What ``record`` gives a call where there is no store to write to (a hub not started): no row."""
    yield Recording()


@asynccontextmanager
async def record(store: Store, *, user_id: str, tool: str, server: str | None = None, session_id: str | None = None,
                 arguments: dict[str, Any] | None = None, masker: Masker = MASKER,
                 writer: AuditWriter | None = None, run_id: str | None = None) -> AsyncIterator[Recording]:
    """Time the block and write one audit row when it ends, however it ends (through ``writer``
    in the background when given, else directly)."""
    rec = Recording()
    at, start = utcnow(), time.perf_counter()
    try:
        yield rec
    except BaseException as exc:
        if rec.outcome == "ok":
            rec.outcome, rec.error = classify(exc)
        raise
    finally:
        row = AuditRecord(at=at, user_id=user_id, tool=tool, outcome=rec.outcome,
                          duration_ms=round((time.perf_counter() - start) * 1000, 3), server=server,
                          session_id=session_id, arguments=masker(arguments or {}, limit=MAX_STRING),
                          error=masker.text(rec.error, limit=MAX_ERROR) if rec.error else None,  # may quote arguments
                          result_size=rec.result_size,
                          run_id=run_id, call_id=rec.call_id)
        if writer is not None:
            writer.submit(row)
        else:
            await _write_now(store, row)


async def _write_now(store: Store, row: AuditRecord) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_TIMEOUT) as scope:
        try:
            await store.add_audit(row)
        except Exception:
            log.exception("could not write the audit row of %s for %s", row.tool, row.user_id)
    if scope.cancelled_caught:
        log.error("writing the audit row of %s for %s took over %ss; dropped", row.tool, row.user_id, WRITE_TIMEOUT)


class AuditEntry(BaseModel):
    id: int
    at: datetime
    user_id: str
    session_id: str | None
    tool: str
    server: str | None
    arguments: dict[str, Any]
    outcome: str
    error: str | None
    duration_ms: float
    result_size: int | None
    run_id: str | None = None  # the agent run that made the call
    call_id: str | None = None  # what `hermes-hub audit --unmask CALL_ID` names


async def query(store: Store, caller: str, *, admin: bool = False, user: str | None = None, tool: str | None = None,
                since: datetime | timedelta | None = None, limit: int = 100) -> list[AuditEntry]:
    """The caller's own rows, newest first; an admin may pass ``user`` or leave it None for everyone."""
    if not admin and user not in (None, caller):
        raise Forbidden("only admins may read another user's audit; drop the user filter to read your own")
    if not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInput(f"limit must be an integer from 1 to 1000 (got {limit!r})")
    if isinstance(since, timedelta):
        since = utcnow() - since
    rows = await store.query_audit(user_id=user if admin else caller, tool=tool, since=since, limit=limit)
    return [AuditEntry(id=r.id or 0, at=r.at, user_id=r.user_id, session_id=r.session_id, tool=r.tool,
                       server=r.server, arguments=r.arguments, outcome=r.outcome, error=r.error,
                       duration_ms=r.duration_ms, result_size=r.result_size, run_id=r.run_id,
                       call_id=r.call_id) for r in rows]


async def prune(store: Store, *, days: float, now: datetime | None = None) -> int:
    """Delete rows older than ``days`` (the retention setting); return how many were deleted."""
    if days <= 0:
        raise InvalidInput(f"audit retention must be a positive number of days (got {days!r})")
    return await store.prune_audit((now or utcnow()) - timedelta(days=days))

