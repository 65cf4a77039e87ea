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
A failed audit write is logged and never fails the call it describes.

Arguments are masked before they are stored: values under secret-looking keys (token, password,
secret, key, authorization, cookie… matched on whole words of the key, so ``api_key`` and
``accessToken`` are masked but ``keyword`` and ``max_tokens`` are not) become ``***``, recursively;
``Masker(patterns=["email", "phone", r"\\bACME-\\d+"])`` also masks matches inside string values.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import anyio
from pydantic import BaseModel

from hermes_hub.errors import Forbidden, InvalidInput, NotFound, SessionBusy
from hermes_hub.storage import Store
from hermes_hub.storage.records import AuditRecord, utcnow

log = logging.getLogger(__name__)
MASK = "***"
SECRET_WORDS = frozenset({
    "token", "password", "passwd", "pwd", "passphrase", "secret", "key", "apikey", "authorization", "auth",
    "cookie", "credential", "credentials", "otp", "pin", "signature",
})
PRESETS = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    # 8 to 15 digits with optional + and separators; an ISO date (2026-01-15) is not a phone number
    "phone": r"(?<![\w+])(?!\d{4}-\d\d-\d\d\b)\+?\d(?:[\s().-]?\d){7,14}(?!\w)",
}
BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]{8,}")
MAX_STRING = 1000  # longer argument strings are cut: the audit is a record, not a copy of the data
MAX_DEPTH = 64  # deeper arguments are summarised: the masker recurses
MAX_ERROR = 2000
WRITE_TIMEOUT = 5.0
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _is_secret_key(key: str) -> bool:
    return any(w.lower() in SECRET_WORDS for w in _WORD_RE.findall(str(key)))


@dataclass(frozen=True)
class Masker:
    """Masks secrets in tool arguments. ``patterns`` are preset names ("email", "phone") or regexes."""

    patterns: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = []
        for p in self.patterns:
            try:
                compiled.append(re.compile(PRESETS.get(p, p)))
            except re.error as exc:
                raise InvalidInput(f"audit mask pattern {p!r} is not a valid regular expression ({exc}); "
                                   f"use a preset ({', '.join(PRESETS)}) or fix the regex") from None
        object.__setattr__(self, "_compiled", tuple(compiled))

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH and isinstance(value, dict | list | tuple):  # a recursion limit is no reason to lose the row
            return f"…(nested deeper than {MAX_DEPTH} levels)"
        if isinstance(value, dict):
            return {k: MASK if _is_secret_key(k) and v not in (None, "") else self(v, depth + 1)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v, depth + 1) for v in value]
        if isinstance(value, str):
            text = BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
            for pattern in self._compiled:
                text = pattern.sub(MASK, text)
            return text if len(text) <= MAX_STRING else f"{text[:MAX_STRING]}…({len(text):,} chars)"
        return value


DEFAULT_MASKER = Masker()


@dataclass
class Recording:
    """What the wrapped call reports about itself; ``record`` fills the rest."""

    outcome: str = "ok"
    error: str | None = None
    result_size: int | None = None

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
    """

    def __init__(self, store: Store, interval: float = 0.25) -> None:
        self.store, self.interval = store, interval
        self._pending: list[AuditRecord] = []
        self._wake = anyio.Event()
        self._lock = anyio.Lock()

    def submit(self, row: AuditRecord) -> None:
        self._pending.append(row)
        self._wake.set()

    async def flush(self) -> None:
        async with self._lock:
            batch, self._pending = self._pending, []
            if not batch:
                return
            with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_TIMEOUT) as scope:
                try:
                    await self.store.add_audits(batch)
                except Exception:
                    log.exception("could not write %d audit rows", len(batch))
            if scope.cancelled_caught:
                log.error("writing %d audit rows took over %ss; dropped", len(batch), WRITE_TIMEOUT)

    async def run(self) -> None:
        """Until cancelled; the final flush is the owner's (``flush()`` after cancelling)."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.sleep(self.interval)  # gather a batch
            await self.flush()


@asynccontextmanager
async def record(store: Store, *, user_id: str, tool: str, server: str | None = None, session_id: str | None = None,
                 arguments: dict[str, Any] | None = None, masker: Masker = DEFAULT_MASKER,
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
                          session_id=session_id, arguments=masker(arguments or {}),
                          error=rec.error[:MAX_ERROR] if rec.error else None, result_size=rec.result_size,
                          run_id=run_id)
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
                       duration_ms=r.duration_ms, result_size=r.result_size, run_id=r.run_id) for r in rows]


async def prune(store: Store, *, days: float, now: datetime | None = None) -> int:
    """Delete rows older than ``days`` (the retention setting); return how many were deleted."""
    if days <= 0:
        raise InvalidInput(f"audit retention must be a positive number of days (got {days!r})")
    return await store.prune_audit((now or utcnow()) - timedelta(days=days))


def mask_patterns(patterns: Iterable[str]) -> Masker:
    """A masker for configured patterns, validated now so a bad regex fails at startup."""
    return Masker(tuple(patterns))
