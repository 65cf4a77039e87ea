"""The SQLite backend: one file, WAL, one writer, readers beside it, FTS5 trigram and sqlite-vec.

Driver: ``sqlean`` (the sqlean.py wheel: Python's sqlite3 module bundled with its own SQLite 3.50,
FTS5 and extension loading enabled, wheels for Linux, macOS and Windows). The sqlite3 module of many
Pythons (this machine's, macOS's) is built without ``enable_load_extension``, so sqlite-vec could not
load through it.

Concurrency: every blocking call runs in a worker thread (``anyio.to_thread``), never on the event
loop. All writes go through one writer connection, one transaction at a time (``BEGIN IMMEDIATE``
under an ``anyio.Lock``), so writes are never interleaved; across processes SQLite's own file lock
serialises writers (``busy_timeout`` waits up to 5 s). Reads use a small pool of ``query_only``
connections that WAL lets run beside the writer.

Durability: ``synchronous=NORMAL`` in WAL mode keeps every committed transaction through a crash of
the process (kill -9); an OS crash or power loss may roll back the last transactions, never corrupt
the file. ``sqlite:///hub.db?synchronous=full`` trades append throughput for power-loss durability.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import sqlean
import sqlite_vec

from hermes_hub.errors import StorageError
from hermes_hub.storage import migrations
from hermes_hub.storage import sqlite_audit as audit_sql
from hermes_hub.storage import sqlite_jobs as jobs_sql
from hermes_hub.storage import sqlite_memory as mem_sql
from hermes_hub.storage import sqlite_runs as runs_sql
from hermes_hub.storage import sqlite_sessions as sql
from hermes_hub.storage.locks import Lease, hold
from hermes_hub.storage.logins import LoginMethods
from hermes_hub.storage.records import (
    AuditRecord,
    MemoryEvent,
    MemoryRecord,
    MessageRecord,
    NewMessage,
    RankedRow,
    RunRecord,
    SearchHit,
    SessionRecord,
    TokenRecord,
)

T = TypeVar("T")
READERS = 4
BUSY_TIMEOUT_MS = 5000
SYNCHRONOUS = ("NORMAL", "FULL")
CLOSE_TIMEOUT = 10.0  # teardown waits this long for in-flight statements, then abandons them
MMAP_BYTES = 256 * 1024 * 1024  # readers map the file: a page not in the SQLite cache costs a memory read, not a copy


class SQLiteStore(jobs_sql.QueueMethods, LoginMethods):
    """A ``Store`` on one SQLite file. Use ``open_sqlite(path)`` (or ``open_store(url)``), not the class."""

    _login_sql = audit_sql

    def __init__(self, path: Path, *, synchronous: str = "NORMAL", readers: int = READERS) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"
        self.synchronous = synchronous.upper()
        if self.synchronous not in SYNCHRONOUS:
            raise StorageError(f"synchronous={synchronous!r} is not supported; use one of {', '.join(SYNCHRONOUS)}")
        self._writer: Any = None
        self._write_lock = anyio.Lock()
        self._readers: list[Any] = []
        self._read_limiter = anyio.CapacityLimiter(readers)
        self._closed = False
        self.migrations_applied: list[str] = []

    # --- plumbing ----------------------------------------------------------------------------------

    def _connect(self, *, reader: bool) -> Any:
        try:
            db = sqlean.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                timeout=BUSY_TIMEOUT_MS / 1000)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA foreign_keys = ON")
            db.enable_load_extension(True)
            sqlite_vec.load(db)
            db.enable_load_extension(False)
            if reader:
                db.execute("PRAGMA query_only = ON")
                db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            else:
                mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise StorageError(f"SQLite would not use WAL mode at {self.path} (got {mode!r}); "
                                       "put the database on a local filesystem (storage.url)")
                db.execute(f"PRAGMA synchronous = {self.synchronous}")
        except sqlean.Error as exc:
            raise StorageError(f"cannot open the SQLite database {self.path}: {exc}. Check storage.url in "
                               "hub.json and that the file is a hermes-hub database in a writable directory") from exc
        return db

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {self.path.parent}: {exc.strerror}; "
                               "set storage.url or HERMES_DATA_DIR to a writable place") from exc
        self._writer = self._connect(reader=False)
        try:
            self.migrations_applied = migrations.apply(self._writer)
        except sqlean.Error as exc:
            raise StorageError(f"migrating {self.path} failed: {exc}") from exc

    async def _shutdown(self) -> None:
        """Wait for the write and every read in flight to finish, then close every connection."""
        async with self._write_lock:
            self._closed = True
            tokens = [object() for _ in range(int(self._read_limiter.total_tokens))]
            for t in tokens:
                await self._read_limiter.acquire_on_behalf_of(t)
            try:
                await anyio.to_thread.run_sync(self._close)
            finally:
                for t in tokens:
                    self._read_limiter.release_on_behalf_of(t)

    def _close(self) -> None:
        for db in [*self._readers, self._writer]:
            if db is not None:
                db.close()
        self._readers.clear()
        self._writer = None

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        def tx() -> T:
            db = self._writer
            db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(db, *args)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return result

        async with self._write_lock:
            if self._closed:
                raise StorageError(f"the store {self.url} is closed")
            return await anyio.to_thread.run_sync(tx)

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        def tx(db: Any) -> T:
            db.execute("BEGIN")  # one snapshot for every statement of fn
            try:
                return fn(db, *args)
            finally:
                db.execute("COMMIT")

        async with self._read_limiter:
            if self._closed:
                raise StorageError(f"the store {self.url} is closed")
            db = self._readers.pop() if self._readers else await anyio.to_thread.run_sync(
                partial(self._connect, reader=True))
            try:
                return await anyio.to_thread.run_sync(tx, db)
            finally:
                self._readers.append(db)

    async def raw(self, statement: str, params: Sequence[Any] = (), *, write: bool = False) -> list[tuple[Any, ...]]:
        """Run one SQL statement (diagnostics, backend tests): on a reader, or in a write transaction."""
        run = self._write if write else self._read
        return await run(lambda db: list(db.execute(statement, params)))

    # --- sessions and messages ---------------------------------------------------------------------

    async def create_session(self, record: SessionRecord) -> None:
        await self._write(sql.insert_session, record)

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        return await self._read(sql.get_session, user_id, session_id)

    async def list_sessions(self, user_id: str, *, limit: int,
                            after: tuple[datetime, str] | None = None) -> list[SessionRecord]:
        return await self._read(sql.list_sessions, user_id, limit, after)

    async def update_session(self, user_id: str, session_id: str, *, updated_at: datetime,
                             title: str | None = None, summary: str | None = None) -> SessionRecord:
        return await self._write(sql.update_session, user_id, session_id, updated_at, title, summary)

    async def delete_session(self, user_id: str, session_id: str) -> None:
        await self._write(sql.delete_session, user_id, session_id)

    async def delete_user_sessions(self, user_id: str) -> int:
        return await self._write(sql.delete_user_sessions, user_id)

    async def append_messages(self, user_id: str, session_id: str, messages: Sequence[NewMessage], *,
                              lease: Lease | None = None) -> list[MessageRecord]:
        return await self._write(sql.append_messages, user_id, session_id, list(messages), lease)

    async def import_session(self, record: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
        return await self._write(sql.import_session, record, list(messages))

    async def list_messages(self, user_id: str, session_id: str, *, limit: int, after_seq: int | None = None,
                            before_seq: int | None = None, newest_first: bool = False) -> list[MessageRecord]:
        return await self._read(sql.list_messages, user_id, session_id, limit, after_seq, before_seq, newest_first)

    async def search_messages(self, user_id: str, query: str, *, limit: int,
                              session_id: str | None = None) -> list[SearchHit]:
        return await self._read(sql.search_messages, user_id, query, limit, session_id)

    # --- session locks -----------------------------------------------------------------------------

    async def acquire_session_lock(self, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
        return await self._write(sql.acquire_lock, user_id, session_id, owner, ttl)

    async def renew_session_lock(self, session_id: str, owner: str, ttl: float) -> bool:
        return await self._write(sql.renew_lock, session_id, owner, ttl)

    async def release_session_lock(self, session_id: str, owner: str) -> None:
        await self._write(sql.release_lock, session_id, owner)

    def session_lock(self, user_id: str, session_id: str, *, ttl: float = 30.0) -> AbstractAsyncContextManager[Lease]:
        return hold(self, user_id, session_id, ttl)

    # --- tokens and audit --------------------------------------------------------------------------

    async def add_token(self, record: TokenRecord) -> None:
        await self._write(audit_sql.add_token, record)

    async def find_token(self, token_hash: str) -> TokenRecord | None:
        return await self._read(audit_sql.find_token, token_hash)

    async def list_tokens(self, user_id: str | None = None) -> list[TokenRecord]:
        return await self._read(audit_sql.list_tokens, user_id)

    async def revoke_token(self, token_id: str, *, at: datetime) -> bool:
        return await self._write(audit_sql.revoke_token, token_id, at)

    async def add_audit(self, record: AuditRecord) -> int:
        return await self._write(audit_sql.add_audit, record)

    async def add_audits(self, records: list[AuditRecord]) -> None:
        def add_all(db: Any, rows: list[AuditRecord]) -> None:
            for row in rows:
                audit_sql.add_audit(db, row)

        await self._write(add_all, records)

    async def query_audit(self, *, user_id: str | None = None, tool: str | None = None,
                          since: datetime | None = None, limit: int = 100) -> list[AuditRecord]:
        return await self._read(audit_sql.query_audit, user_id, tool, since, limit)

    async def prune_audit(self, before: datetime) -> int:
        return await self._write(audit_sql.prune_audit, before)

    # --- memories ----------------------------------------------------------------------------------

    async def add_memory(self, record: MemoryRecord, event: MemoryEvent, *, key: str,
                         supersedes: str | None = None) -> None:
        await self._write(mem_sql.insert_memory, record, key, event, supersedes)

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
        return await self._write(mem_sql.set_state, user_id, memory_id, state, event)

    async def archive_idle_memories(self, before: datetime, *, at: datetime) -> int:
        return await self._write(mem_sql.archive_idle, before.timestamp(), at.timestamp())

    async def delete_memories(self, user_id: str, memory_id: str | None = None) -> int:
        return await self._write(mem_sql.delete_memories, user_id, memory_id)

    async def touch_memories(self, user_id: str, memory_ids: Sequence[str], *, at: datetime) -> None:
        await self._write(mem_sql.touch, user_id, list(memory_ids), at.timestamp())

    async def count_memories(self, user_id: str | None = None) -> dict[str, int]:
        return await self._read(mem_sql.count_memories, user_id)

    async def memory_events(self, user_id: str, memory_id: str) -> list[MemoryEvent]:
        return await self._read(mem_sql.list_events, user_id, memory_id)

    async def lexical_search(self, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
        fn = mem_sql.lexical_memories if source == "memories" else mem_sql.lexical_messages
        return await self._read(fn, user_id, match, limit)

    async def messages_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        return await self._read(mem_sql.messages_by_pk, user_id, list(pks))

    # --- background indexing -----------------------------------------------------------------------

    async def pending_index(self, source: str, mark: str) -> int:
        return await self._read(mem_sql.pending, source, mark)

    # One process writes a SQLite file, so a batch is "claimed" by reading it: ``owner`` and ``lease``
    # are for stores that several replicas share (PostgreSQL).
    async def unindexed(self, source: str, mark: str, limit: int, *, owner: str | None = None,
                        lease: float = 60.0) -> list[tuple[int, str, str]]:
        return await self._read(mem_sql.unindexed, source, mark, limit)

    async def unindexed_messages(self, mark: str, limit: int, *, owner: str | None = None,
                                 lease: float = 60.0) -> list[tuple[int, str, str, str]]:
        return await self._read(mem_sql.unindexed_messages, mark, limit)

    async def renew_index_claim(self, mark: str, owner: str, *, lease: float = 60.0) -> bool:
        return True

    async def index_message_terms(self, rows: Sequence[tuple[int, str, str]], *, mark: str, last_pk: int,
                                  owner: str | None = None) -> bool:
        await self._write(mem_sql.index_message_terms, list(rows), mark, last_pk)
        return True

    async def ensure_vector_table(self, source: str, embedder: str, dims: int) -> str:
        return await self._write(mem_sql.ensure_vector_table, source, embedder, dims)

    async def add_vectors(self, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], *, mark: str,
                          last_pk: int, owner: str | None = None) -> bool:
        await self._write(mem_sql.add_vectors, table, list(rows), mark, last_pk)
        return True

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        return await self._read(mem_sql.nearest, table, user_id, vector, k)

    async def reset_message_terms(self, mark: str) -> None:
        await self._write(mem_sql.reset_message_terms, mark)

    async def index_mark(self, mark: str) -> int:
        return await self._read(mem_sql.mark, mark)

    async def vectors_between(self, table: str, user_id: str, after_pk: int, upto_pk: int) -> list[tuple[int, bytes]]:
        return await self._read(mem_sql.vectors_between, table, user_id, after_pk, upto_pk)

    async def drop_vector_tables(self, embedder: str | None = None) -> list[str]:
        return await self._write(mem_sql.drop_vector_tables, embedder)

    # --- agent runs --------------------------------------------------------------------------------

    async def add_run(self, record: RunRecord) -> None:
        await self._write(runs_sql.add_run, record)

    async def get_run(self, user_id: str, run_id: str) -> RunRecord:
        return await self._read(runs_sql.get_run, user_id, run_id)

    async def list_runs(self, user_id: str, *, limit: int = 20) -> list[RunRecord]:
        return await self._read(runs_sql.list_runs, user_id, limit)

    async def rate_run(self, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord:
        return await self._write(runs_sql.rate_run, user_id, run_id, rating, comment)


@asynccontextmanager
async def open_sqlite(path: str | Path, *, synchronous: str = "NORMAL") -> AsyncIterator[SQLiteStore]:
    """Open (creating and migrating if needed) the database at ``path``; close it on exit."""
    store = SQLiteStore(Path(path).expanduser(), synchronous=synchronous)
    try:
        await anyio.to_thread.run_sync(store._open)
        yield store
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
            await store._shutdown()
