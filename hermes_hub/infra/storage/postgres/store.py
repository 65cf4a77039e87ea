"""The PostgreSQL backend: several hub replicas share one database (pgvector, pg_trgm, tsvector).

Driver: ``asyncpg`` with its pool (bounded: ``?pool_size=10`` by default). Every method is one
transaction on one pooled connection; the SQL lives in a module per concept beside this one (the
methods that only pick it are shared with SQLite: ``storage.crud``); the schema in ``schema``.

Statements are bounded by a server-side ``statement_timeout`` (``?statement_timeout=30`` seconds).
After the server restarts, the pool's dead connections are replaced on the next call: a call that
meets a dropped connection is retried once on a fresh one (a write under its idempotency key, so it
applies once: ``transactions``); while the server is down calls fail at once with a
``StorageError`` that says so, and work again when it is back. URL forms: ``url``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import asyncpg

from hermes_hub.infra.errors import StorageError
from hermes_hub.infra.storage.crud import Dialect, SharedMethods
from hermes_hub.infra.storage.postgres import (
    approvals,
    artifacts,
    audit,
    counters,
    eval_cases,
    claims,
    documents,
    indexing,
    jobs,
    logins,
    oauth,
    oauth_upkeep,
    memories,
    pins,
    provenance,
    runs,
    schedules,
    sealed,
    schema,
    sessions,
    summaries,
    tokens,
    vectors,
    working,
)
from hermes_hub.infra.storage.postgres.transactions import Answer, Pruner, new_key, write_once
from hermes_hub.infra.storage.postgres.url import parse_url, redact

T = TypeVar("T")
POOL_SIZE = 10
STATEMENT_TIMEOUT = 30.0  # seconds
CONNECT_TIMEOUT = 10.0
CLOSE_TIMEOUT = 10.0
UNCONFIRMED = ("; this write's COMMIT was sent but never confirmed, so it may have been applied: read the data "
               "back before writing it again")
INDEX_LEASE = 60.0  # seconds a replica holds a batch of background indexing without renewing it
# a connection that died under a call (server restart, network cut): retry once on a fresh one
_DROPPED = (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.AdminShutdownError,
            asyncpg.exceptions.CannotConnectNowError, asyncpg.exceptions.ConnectionFailureError,
            asyncpg.exceptions.InterfaceError, ConnectionError)
_UNREACHABLE = (OSError, TimeoutError, asyncpg.exceptions.CannotConnectNowError,
                asyncpg.exceptions.ConnectionFailureError)


async def _keep_session(conn: Any) -> None:
    """A connection back in the pool keeps its session (asyncpg's default reset costs a round trip per
    call): the store sets nothing beyond a transaction (``SET LOCAL``, transaction-scoped advisory
    locks), and asyncpg still rolls back a transaction left open."""


class PostgresStore(SharedMethods):
    """A ``Store`` on a PostgreSQL database. Use ``open_postgres(url)`` (or ``open_store(url)``)."""

    native_nearest = True  # recall asks the HNSW index rather than a matrix cached in the process
    _sql = Dialect(sessions=sessions, tokens=tokens, logins=logins, oauth=oauth, audit=audit, runs=runs, memories=memories,
                   indexing=indexing, vectors=vectors, jobs=jobs, summaries=summaries, sealed=sealed,
                   pins=pins, artifacts=artifacts,
                   approvals=approvals,
                   counters=counters,
                   eval_cases=eval_cases,
                   schedules=schedules,
                   documents=documents,
                   provenance=provenance,
                   working=working,
                   oauth_upkeep=oauth_upkeep,
                   )

    def __init__(self, url: str) -> None:
        self.url = redact(url)
        self._dsn, options = parse_url(url)
        self.pool_size = int(options.get("pool_size", POOL_SIZE))
        self.statement_timeout = options.get("statement_timeout", STATEMENT_TIMEOUT)
        self._idle_timeout = max(self.statement_timeout, 5.0)  # never shorter than a busy machine's pause
        self._pool: Any = None
        self._closed = False
        self._pruner = Pruner()
        self.migrations_applied: list[str] = []

    async def _open(self) -> None:
        try:
            self._pool = await asyncpg.create_pool(
                self._dsn, min_size=1, max_size=self.pool_size, timeout=CONNECT_TIMEOUT,
                command_timeout=self.statement_timeout + 5, reset=_keep_session,
                server_settings={"statement_timeout": str(int(self.statement_timeout * 1000)),
                                 # a transaction orphaned by a cut link (its client gone unheard) ends by
                                 # then, so the retry of its write, waiting on its key, goes on
                                 "idle_in_transaction_session_timeout": str(int(self._idle_timeout * 1000)),
                                 "application_name": "hermes-hub"})
        except asyncpg.exceptions.InvalidCatalogNameError as exc:
            raise StorageError(f"cannot open {self.url}: {exc}. Create it first (createdb), or fix the database "
                               "name in storage.url") from exc
        except (*_UNREACHABLE, asyncpg.PostgresError) as exc:
            raise StorageError(f"cannot connect to PostgreSQL at {self.url}: {exc}. Check storage.url in hub.json "
                               "and that the server is running and accepts this user") from exc
        try:
            async with self._pool.acquire() as conn:
                self.migrations_applied = await schema.apply(conn)
        except asyncpg.PostgresError as exc:
            await self._pool.close()
            raise StorageError(f"migrating {self.url} failed: {exc}. The user needs the right to create tables "
                               "and the extensions vector and pg_trgm (or an admin creates them first)") from exc

    async def _shutdown(self) -> None:
        self._closed = True
        if self._pool is not None:
            try:
                with anyio.fail_after(CLOSE_TIMEOUT):
                    await self._pool.close()
            except TimeoutError:
                self._pool.terminate()

    async def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, write: bool = True) -> T:
        """``fn(conn, *args)`` in one transaction; once more on a fresh connection if the first one died.

        A write is retried under the same key (``transactions``): if its first COMMIT was
        applied and only the answer lost, the retry finds the key and returns the first answer."""
        key, answer = new_key(), Answer()
        for attempt in (1, 2):
            if self._closed:
                raise StorageError(f"the store {self.url} is closed")
            try:
                async with self._pool.acquire(timeout=CONNECT_TIMEOUT) as conn:
                    if not write:
                        async with conn.transaction(readonly=True):
                            return await fn(conn, *args)
                    await self._pruner.maybe(conn)
                    return await write_once(conn, key, answer, fn, *args)
            except asyncpg.exceptions.QueryCanceledError as exc:
                raise StorageError(f"a database statement took longer than {self.statement_timeout:g} s and was "
                                   f"cancelled ({exc}); raise ?statement_timeout= in storage.url if it is "
                                   f"expected{UNCONFIRMED if answer.known else ''}") from exc
            except (*_DROPPED, OSError, TimeoutError) as exc:
                if attempt == 1 and (answer.known or not isinstance(exc, _UNREACHABLE)):
                    continue  # a dropped connection, or a COMMIT sent and not confirmed: the retry finds out
                raise self._unavailable(exc, answer) from exc
        raise AssertionError("unreachable")

    def _unavailable(self, exc: BaseException, answer: Answer) -> StorageError:
        message = (f"PostgreSQL at {self.url} is unavailable ({type(exc).__name__}: {exc}); calls work again "
                   "once it is back")
        return StorageError(message + (UNCONFIRMED if answer.known else ""))

    async def _read(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return await self._run(fn, *args, write=False)

    _write = _run  # the name the shared parts (``crud``) call

    async def raw(self, statement: str, params: Sequence[Any] = (), *, write: bool = False) -> list[tuple[Any, ...]]:
        """Run one SQL statement (diagnostics, backend tests)."""
        async def run(conn: Any) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in await conn.fetch(statement, *params)]
        return await self._run(run, write=write)

    # --- background indexing: the part that differs ---------------------------------------------

    async def unindexed(self, source: str, mark: str, limit: int, *, owner: str | None = None,
                        lease: float = INDEX_LEASE) -> list[tuple[int, str, str]]:
        if owner is not None:  # claimed per batch: replicas sharing the database never index a row twice
            return await self._run(indexing.claim_rows, source, mark, owner, lease, limit)
        return await self._read(indexing.unindexed, source, mark, limit)

    async def unindexed_messages(self, mark: str, limit: int, *, owner: str | None = None,
                                 lease: float = INDEX_LEASE) -> list[tuple[int, str, str, str]]:
        if owner is not None:
            return await self._run(indexing.claim_messages, mark, owner, lease, limit)
        return await self._read(indexing.unindexed_messages, mark, limit)

    async def renew_index_claim(self, mark: str, owner: str, *, lease: float = INDEX_LEASE) -> bool:
        return await self._run(claims.renew, mark, owner, lease)


@asynccontextmanager
async def open_postgres(url: str) -> AsyncIterator[PostgresStore]:
    """Connect to (and migrate, under an advisory lock) the database at ``url``; close the pool on exit."""
    store = PostgresStore(url)
    await store._open()
    try:
        yield store
    finally:
        with anyio.CancelScope(shield=True):
            await store._shutdown()
