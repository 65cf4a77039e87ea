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

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import sqlean
import sqlite_vec

from hermes_hub.infra.errors import StorageError
from hermes_hub.infra.storage.crud import Dialect, SharedMethods
from hermes_hub.infra.storage.sqlite import (
    approvals,
    artifacts,
    audit,
    counters,
    eval_cases,
    documents,
    indexing,
    jobs,
    logins,
    oauth,
    oauth_upkeep,
    memories,
    migrations,
    pins,
    provenance,
    runs,
    schedules,
    sealed,
    sessions,
    summaries,
    tokens,
    vectors,
    working,
)
from hermes_hub.infra.storage.sqlite.privacy import make_private

T = TypeVar("T")
log = logging.getLogger("hermes_hub.infra.storage")
READERS = 4
BUSY_TIMEOUT_MS = 5000
SYNCHRONOUS = ("NORMAL", "FULL")
CLOSE_TIMEOUT = 10.0  # teardown waits this long for in-flight statements, then abandons them
MMAP_BYTES = 256 * 1024 * 1024  # readers map the file: a page not in the SQLite cache costs a memory read, not a copy


class SQLiteStore(SharedMethods):
    """A ``Store`` on one SQLite file. Use ``open_sqlite(path)`` (or ``open_store(url)``), not the class."""

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

    def __init__(self, path: Path, *, synchronous: str = "NORMAL", readers: int = READERS,
                 own_folder: bool = False) -> None:
        self.path, self.own_folder = path, own_folder
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
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {self.path.parent}: {exc.strerror}; "
                               "set storage.url or HERMES_DATA_DIR to a writable place") from exc
        changed, note = make_private(self.path, own_folder=self.own_folder)
        if changed:
            log.warning("storage: other OS users could read the store; made it private: %s", "; ".join(changed))
        if note:
            log.info("storage: %s", note)
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

    # --- background indexing: the part that differs ---------------------------------------------

    # One process writes a SQLite file, so a batch is "claimed" by reading it: ``owner`` and ``lease``
    # are for stores that several replicas share (PostgreSQL).
    async def unindexed(self, source: str, mark: str, limit: int, *, owner: str | None = None,
                        lease: float = 60.0) -> list[tuple[int, str, str]]:
        return await self._read(indexing.unindexed, source, mark, limit)

    async def unindexed_messages(self, mark: str, limit: int, *, owner: str | None = None,
                                 lease: float = 60.0) -> list[tuple[int, str, str, str]]:
        return await self._read(indexing.unindexed_messages, mark, limit)

    async def renew_index_claim(self, mark: str, owner: str, *, lease: float = 60.0) -> bool:
        return True


@asynccontextmanager
async def open_sqlite(path: str | Path, *, synchronous: str = "NORMAL", own_folder: bool = False,
                      ) -> AsyncIterator[SQLiteStore]:
    """Open (creating and migrating if needed) the database at ``path``, made private (``privacy``; its
    folder too when the hub made it, or ``own_folder``: the hub's data folder); close it on exit."""
    store = SQLiteStore(Path(path).expanduser(), synchronous=synchronous, own_folder=own_folder)
    try:
        await anyio.to_thread.run_sync(store._open)
        yield store
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
            await store._shutdown()
