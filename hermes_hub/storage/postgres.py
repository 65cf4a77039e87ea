"""The PostgreSQL backend: several hub replicas share one database (pgvector, pg_trgm, tsvector).

Driver: ``asyncpg`` with its pool (bounded: ``?pool_size=10`` by default). Every method is one
transaction on one pooled connection; the SQL lives per concept in ``postgres_sessions``,
``postgres_audit``, ``postgres_memory`` and ``postgres_jobs``; the schema in ``postgres_schema``.

Statements are bounded by a server-side ``statement_timeout`` (``?statement_timeout=30`` seconds).
After the server restarts, the pool's dead connections are replaced on the next call: a call that
meets a dropped connection is retried once on a fresh one (a write under its idempotency key, so it
applies once: ``postgres_transactions``); while the server is down calls fail at once with a
``StorageError`` that says so, and work again when it is back. URL forms: ``postgres_url``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any, TypeVar

import anyio
import asyncpg

from hermes_hub.errors import StorageError
from hermes_hub.storage import postgres_audit as audit_sql
from hermes_hub.storage import postgres_indexing as claims_sql
from hermes_hub.storage import postgres_jobs as jobs_sql
from hermes_hub.storage import postgres_memory as mem_sql
from hermes_hub.storage import postgres_schema as schema
from hermes_hub.storage import postgres_sessions as sql
from hermes_hub.storage.locks import Lease, hold
from hermes_hub.storage.logins import LoginMethods
from hermes_hub.storage.postgres_transactions import Answer, Pruner, new_key, write_once
from hermes_hub.storage.postgres_url import parse_url, redact
from hermes_hub.storage.records import (
    AuditRecord,
    ExtractionJob,
    MemoryEvent,
    MemoryRecord,
    MessageRecord,
    NewMessage,
    RankedRow,
    RunRecord,
    SearchHit,
    SessionRecord,
    SummaryJob,
    TokenRecord,
)

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


class PostgresStore(LoginMethods):
    """A ``Store`` on a PostgreSQL database. Use ``open_postgres(url)`` (or ``open_store(url)``)."""

    native_nearest = True  # recall asks the HNSW index rather than a matrix cached in the process
    _login_sql = audit_sql

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

        A write is retried under the same key (``postgres_transactions``): if its first COMMIT was
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

    _write = _run  # the name the shared parts (``LoginMethods``) call

    async def raw(self, statement: str, params: Sequence[Any] = (), *, write: bool = False) -> list[tuple[Any, ...]]:
        """Run one SQL statement (diagnostics, backend tests)."""
        async def run(conn: Any) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in await conn.fetch(statement, *params)]
        return await self._run(run, write=write)

    # --- sessions and messages ---------------------------------------------------------------------

    async def create_session(self, record: SessionRecord) -> None:
        await self._run(sql.insert_session, record)

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        return await self._read(sql.get_session, user_id, session_id)

    async def list_sessions(self, user_id: str, *, limit: int,
                            after: tuple[datetime, str] | None = None) -> list[SessionRecord]:
        return await self._read(sql.list_sessions, user_id, limit, after)

    async def update_session(self, user_id: str, session_id: str, *, updated_at: datetime,
                             title: str | None = None, summary: str | None = None) -> SessionRecord:
        return await self._run(sql.update_session, user_id, session_id, updated_at, title, summary)

    async def delete_session(self, user_id: str, session_id: str) -> None:
        await self._run(sql.delete_session, user_id, session_id)

    async def delete_user_sessions(self, user_id: str) -> int:
        return await self._run(sql.delete_user_sessions, user_id)

    async def append_messages(self, user_id: str, session_id: str, messages: Sequence[NewMessage], *,
                              lease: Lease | None = None) -> list[MessageRecord]:
        return await self._run(sql.append_messages, user_id, session_id, list(messages), lease)

    async def import_session(self, record: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
        return await self._run(sql.import_session, record, list(messages))

    async def list_messages(self, user_id: str, session_id: str, *, limit: int, after_seq: int | None = None,
                            before_seq: int | None = None, newest_first: bool = False) -> list[MessageRecord]:
        return await self._read(sql.list_messages, user_id, session_id, limit, after_seq, before_seq, newest_first)

    async def search_messages(self, user_id: str, query: str, *, limit: int,
                              session_id: str | None = None) -> list[SearchHit]:
        return await self._read(sql.search_messages, user_id, query, limit, session_id)

    # --- session locks -----------------------------------------------------------------------------

    async def acquire_session_lock(self, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
        return await self._run(sql.acquire_lock, user_id, session_id, owner, ttl)

    async def renew_session_lock(self, session_id: str, owner: str, ttl: float) -> bool:
        return await self._run(sql.renew_lock, session_id, owner, ttl)

    async def release_session_lock(self, session_id: str, owner: str) -> None:
        await self._run(sql.release_lock, session_id, owner)

    def session_lock(self, user_id: str, session_id: str, *, ttl: float = 30.0) -> AbstractAsyncContextManager[Lease]:
        return hold(self, user_id, session_id, ttl)

    # --- tokens, audit, agent runs -----------------------------------------------------------------

    async def add_token(self, record: TokenRecord) -> None:
        await self._run(audit_sql.add_token, record)

    async def find_token(self, token_hash: str) -> TokenRecord | None:
        return await self._read(audit_sql.find_token, token_hash)

    async def list_tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        return await self._read(audit_sql.list_tokens, user_id)

    async def revoke_token(self, token_id: str, *, at: datetime) -> bool:
        return await self._run(audit_sql.revoke_token, token_id, at)

    async def add_audit(self, record: AuditRecord) -> int:
        return await self._run(audit_sql.add_audit, record)

    async def add_audits(self, records: list[AuditRecord]) -> None:
        await self._run(audit_sql.add_audits, list(records))

    async def query_audit(self, *, user_id: str | None = None, tool: str | None = None,
                          since: datetime | None = None, limit: int = 100) -> list[AuditRecord]:
        return await self._read(audit_sql.query_audit, user_id, tool, since, limit)

    async def prune_audit(self, before: datetime) -> int:
        return await self._run(audit_sql.prune_audit, before)

    async def add_run(self, record: RunRecord) -> None:
        await self._run(audit_sql.add_run, record)

    async def get_run(self, user_id: str, run_id: str) -> RunRecord:
        return await self._read(audit_sql.get_run, user_id, run_id)

    async def list_runs(self, user_id: str, *, limit: int = 20) -> list[RunRecord]:
        return await self._read(audit_sql.list_runs, user_id, limit)

    async def rate_run(self, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
        return await self._run(audit_sql.rate_run, user_id, run_id, rating, comment)

    # --- memories ----------------------------------------------------------------------------------

    async def add_memory(self, record: MemoryRecord, event: MemoryEvent, *, key: str,
                         supersedes: str | None = None) -> None:
        await self._run(mem_sql.insert_memory, record, key, event, supersedes)

    async def find_duplicate_memory(self, user_id: str, key: str) -> str | None:
        return await self._read(mem_sql.find_duplicate, user_id, key)

    async def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord:
        return await self._read(mem_sql.get_memory, user_id, memory_id)

    async def memories_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]:
        return await self._read(mem_sql.memories_by_pk, user_id, list(pks))

    async def list_memories(self, user_id: str, *, state: str | None = None, kind: str | None = None,
                            limit: int = 50, before_pk: int | None = None,
                            include_superseded: bool = True) -> list[tuple[int, MemoryRecord]]:
        return await self._read(mem_sql.list_memories, user_id, state, kind, limit, before_pk, include_superseded)

    async def set_memory_state(self, user_id: str, memory_id: str, state: str, event: MemoryEvent) -> MemoryRecord:
        return await self._run(mem_sql.set_state, user_id, memory_id, state, event)

    async def archive_idle_memories(self, before: datetime, *, at: datetime) -> int:
        return await self._run(mem_sql.archive_idle, before.timestamp(), at.timestamp())

    async def delete_memories(self, user_id: str, memory_id: str | None = None) -> int:
        return await self._run(mem_sql.delete_memories, user_id, memory_id)

    async def touch_memories(self, user_id: str, memory_ids: Sequence[str], *, at: datetime) -> None:
        await self._run(mem_sql.touch, user_id, list(memory_ids), at.timestamp())

    async def count_memories(self, user_id: str | None = None) -> dict[str, int]:
        return await self._read(mem_sql.count_memories, user_id)

    async def memory_events(self, user_id: str, memory_id: str) -> list[MemoryEvent]:
        return await self._read(mem_sql.list_events, user_id, memory_id)

    async def lexical_search(self, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
        return await self._read(mem_sql.lexical, source, user_id, match, limit)

    async def messages_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        return await self._read(mem_sql.messages_by_pk, user_id, list(pks))

    # --- background indexing -----------------------------------------------------------------------

    async def pending_index(self, source: str, mark: str) -> int:
        return await self._read(mem_sql.pending, source, mark)

    async def unindexed(self, source: str, mark: str, limit: int, *, owner: str | None = None,
                        lease: float = INDEX_LEASE) -> list[tuple[int, str, str]]:
        if owner is not None:  # claimed per batch: replicas sharing the database never index a row twice
            return await self._run(mem_sql.claim_rows, source, mark, owner, lease, limit)
        return await self._read(mem_sql.unindexed, source, mark, limit)

    async def unindexed_messages(self, mark: str, limit: int, *, owner: str | None = None,
                                 lease: float = INDEX_LEASE) -> list[tuple[int, str, str, str]]:
        if owner is not None:
            return await self._run(mem_sql.claim_messages, mark, owner, lease, limit)
        return await self._read(mem_sql.unindexed_messages, mark, limit)

    async def renew_index_claim(self, mark: str, owner: str, *, lease: float = INDEX_LEASE) -> bool:
        return await self._run(claims_sql.renew, mark, owner, lease)

    async def index_message_terms(self, rows: Sequence[tuple[int, str, str]], *, mark: str, last_pk: int,
                                  owner: str | None = None) -> bool:
        return await self._run(mem_sql.index_message_terms, list(rows), mark, last_pk, owner)

    async def ensure_vector_table(self, source: str, embedder: str, dims: int) -> str:
        return await self._run(mem_sql.ensure_vector_table, source, embedder, dims)

    async def add_vectors(self, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], *, mark: str,
                          last_pk: int, owner: str | None = None) -> bool:
        return await self._run(mem_sql.add_vectors, table, list(rows), mark, last_pk, owner)

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        return await self._read(mem_sql.nearest, table, user_id, vector, k)

    async def reset_message_terms(self, mark: str) -> None:
        await self._run(mem_sql.reset_message_terms, mark)

    async def index_mark(self, mark: str) -> int:
        return await self._read(mem_sql.mark, mark)

    async def vectors_between(self, table: str, user_id: str, after_pk: int, upto_pk: int) -> list[tuple[int, bytes]]:
        return await self._read(mem_sql.vectors_between, table, user_id, after_pk, upto_pk)

    async def drop_vector_tables(self, embedder: str | None = None) -> list[str]:
        return await self._run(mem_sql.drop_vector_tables, embedder)

    # --- memory extraction queue -------------------------------------------------------------------

    async def schedule_extraction(self, limit: int = 1000) -> int:
        return await self._run(jobs_sql.schedule, limit)

    async def claim_extraction(self, owner: str, *, lease: float) -> ExtractionJob | None:
        return await self._run(jobs_sql.claim, owner, lease)

    async def renew_extraction(self, job_id: int, owner: str, *, lease: float) -> bool:
        return await self._run(jobs_sql.renew, job_id, owner, lease)

    async def extraction_messages(self, job: ExtractionJob, *, context: int) -> list[tuple[Any, ...]]:
        return await self._read(jobs_sql.job_messages, job, context)

    async def finish_extraction(self, job_id: int, owner: str,
                                writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
                                events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
        return await self._run(jobs_sql.finish, job_id, owner, list(writes), list(events), result)

    async def fail_extraction(self, job_id: int, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._run(jobs_sql.fail, job_id, owner, error, retry_in)

    async def extraction_counts(self) -> dict[str, int]:
        return await self._read(jobs_sql.counts)

    # --- session summaries -------------------------------------------------------------------------

    async def request_summary(self, user_id: str, session_id: str, upto_seq: int, *, min_new: int = 1) -> bool:
        return await self._run(jobs_sql.request_summary, user_id, session_id, upto_seq, min_new)

    async def claim_summary(self, owner: str, *, lease: float) -> SummaryJob | None:
        return await self._run(jobs_sql.claim_summary, owner, lease)

    async def renew_summary(self, session_id: str, owner: str, *, lease: float) -> bool:
        return await self._run(jobs_sql.renew_summary, session_id, owner, lease)

    async def finish_summary(self, session_id: str, owner: str, summary: str) -> bool:
        return await self._run(jobs_sql.finish_summary, session_id, owner, summary)

    async def fail_summary(self, session_id: str, owner: str, error: str, *, retry_in: float | None) -> None:
        await self._run(jobs_sql.fail_summary, session_id, owner, error, retry_in)

    async def summary_counts(self) -> dict[str, int]:
        return await self._read(jobs_sql.summary_counts)


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
