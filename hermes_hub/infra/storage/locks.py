"""Per-session locks: one writer or agent run per session, across every process sharing the database.

The lock is a row (session id, owner, expiry) that a backend takes atomically. ``hold`` wraps the
three primitives in an async context manager that backends return from ``session_lock``:

    async with store.session_lock(user_id, session_id) as lease:
        await store.append_messages(user_id, session_id, msgs, lease=lease)

A second acquirer gets ``SessionBusy`` at once. While held, a heartbeat renews the expiry every
``ttl / 3`` seconds, so a holder that dies (kill -9, power loss) frees the session within ``ttl``.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from hermes_hub.infra.errors import SessionBusy
from hermes_hub.infra.storage.records import Lease

if TYPE_CHECKING:
    from hermes_hub.infra.storage.base import SessionLockStore

log = logging.getLogger(__name__)
RELEASE_TIMEOUT = 5.0  # teardown is bounded even if the database is stuck


def new_owner() -> str:
    """A unique owner tag that also says who holds the lock (host:pid) when an operator looks."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(6)}"


@asynccontextmanager
async def hold(store: SessionLockStore, user_id: str, session_id: str, ttl: float = 30.0) -> AsyncIterator[Lease]:
    if ttl <= 0:
        raise ValueError("ttl must be positive")
    lease = Lease(session_id, new_owner(), ttl)
    # Shielded: a cancellation landing after the row is written but before we learn it would leave
    # the session locked until the ttl ran out. It is delivered at the next checkpoint instead.
    with anyio.CancelScope(shield=True):
        acquired = await store.acquire_session_lock(user_id, session_id, lease.owner, ttl)
    if not acquired:
        raise SessionBusy(session_id)
    body_error: BaseException | None = None
    try:
        # The body runs inside the task group, but its exception is re-raised outside so callers
        # see their own exception rather than an ExceptionGroup.
        async with anyio.create_task_group() as tg:
            tg.start_soon(_heartbeat, store, lease)
            try:
                yield lease
            except BaseException as exc:  # noqa: BLE001 - re-raised below, unchanged
                body_error = exc
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(RELEASE_TIMEOUT):
            try:
                await store.release_session_lock(session_id, lease.owner)
            except Exception:  # never hide the body's own error; the row expires within ttl anyway
                log.warning("could not release the lock of session %s", session_id, exc_info=True)
    if body_error is not None:
        raise body_error


async def _heartbeat(store: SessionLockStore, lease: Lease) -> None:
    while True:
        await anyio.sleep(lease.ttl / 3)
        try:
            ok = await store.renew_session_lock(lease.session_id, lease.owner, lease.ttl)
        except Exception:  # a transient database error: try again next beat, the ttl covers it
            log.warning("could not renew the lock of session %s", lease.session_id, exc_info=True)
            continue
        if not ok:
            lease.lost = True
            log.error("lost the lock of session %s (expired while held); appends will be refused",
                      lease.session_id)
            return
