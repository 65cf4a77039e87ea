"""A PostgreSQL write transaction that applies exactly once, even when its COMMIT's answer is lost.

A connection can drop after the server applied a COMMIT but before the client heard back: the
client cannot tell "committed" from "rolled back", and a blind retry would apply the write twice
(a message appended twice). So every write transaction first records a client-made key in
``write_keys`` and the retry of that write uses the same key:

- the retry's own ``INSERT ... ON CONFLICT DO NOTHING`` of the key waits, on the key's unique index,
  for the first attempt's transaction if the server is still finishing it, then
- inserts nothing if the first attempt committed: the retry rolls back and returns the first
  attempt's answer (computed before its COMMIT), or
- inserts the key if the first attempt never committed, and does the write itself.

``BEGIN`` and the key go in one round trip (the simple protocol takes several statements at once;
the key is a UUID made here, so writing it into the SQL is safe). Keys older than ``KEY_TTL`` are
pruned now and then: a retry comes within seconds of its first attempt.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from hermes_hub.infra.errors import StorageError

T = TypeVar("T")
Connection = Any  # an asyncpg connection
KEY_TTL = 600.0  # seconds a key is kept: far longer than any retry takes to come
PRUNE_EVERY = 60.0  # seconds between prunes, per store


def new_key() -> str:
    return str(uuid.uuid4())


class Answer:
    """What the first attempt of one write returned, kept for a retry that finds it committed."""

    def __init__(self) -> None:
        self.value: Any = None
        self.known = False


class Pruner:
    """Deletes old keys at most every ``PRUNE_EVERY`` seconds (outside any write's transaction)."""

    def __init__(self) -> None:
        self._next = 0.0

    async def maybe(self, conn: Connection) -> None:
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + PRUNE_EVERY
        await conn.execute("DELETE FROM write_keys WHERE at < date_part('epoch', clock_timestamp()) - $1", KEY_TTL)


async def write_once(conn: Connection, key: str, answer: Answer, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``fn(conn, *args)`` in a transaction keyed by ``key``: applied at most once across retries."""
    status = await conn.execute(f"BEGIN; INSERT INTO write_keys (key) VALUES ('{uuid.UUID(key)}') "
                                f"ON CONFLICT DO NOTHING")
    try:
        if status == "INSERT 0 0":  # an earlier attempt committed; only its answer was lost on the way
            await conn.execute("ROLLBACK")
            if not answer.known:  # it committed without fn returning: cannot be, but never guess
                raise StorageError("a write was applied but its answer was lost; read the data back to see it")
            return answer.value
        value = await fn(conn, *args)
    except Exception:
        await rollback(conn)
        raise
    except BaseException:  # cancelled: no await is safe here; the server rolls back a dropped connection
        conn.terminate()
        raise
    answer.value, answer.known = value, True  # before COMMIT: a retry may find it committed
    await conn.execute("COMMIT")
    return value


async def rollback(conn: Connection) -> None:
    if conn.is_closed():
        return
    try:
        await conn.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - a connection that cannot roll back is dropped (the server rolls back)
        conn.terminate()
