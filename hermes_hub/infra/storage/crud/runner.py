"""The small interface the shared methods are written against: a dialect's SQL, and two runners.

A backend names its SQL modules in a ``Dialect`` (the same function names in both: SQLite's are plain
functions of a connection run in a worker thread, PostgreSQL's are coroutines of a pooled connection)
and supplies ``_read(fn, *args)`` (one read-only transaction) and ``_write(fn, *args)`` (one write
transaction; PostgreSQL's retries under a write key). The methods in ``crud`` only pick the function
and the runner, so the two backends share them and keep only what really differs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Dialect:
    """One backend's SQL, a module per concept."""

    sessions: ModuleType
    tokens: ModuleType
    logins: ModuleType
    oauth: ModuleType
    audit: ModuleType
    runs: ModuleType
    memories: ModuleType
    indexing: ModuleType
    vectors: ModuleType
    jobs: ModuleType
    summaries: ModuleType
    sealed: ModuleType
    pins: ModuleType
    artifacts: ModuleType
    approvals: ModuleType
    counters: ModuleType  # guards.limits
    eval_cases: ModuleType  # issue 21
    schedules: ModuleType
    documents: ModuleType
    provenance: ModuleType  # which messages a memory was written from
    working: ModuleType  # each session's working memory
    oauth_upkeep: ModuleType  # OAuth clients never used, counts


class Runner:
    """What a mixin of ``crud`` needs from the store it is mixed into."""

    _sql: Dialect
    _read: Callable[..., Awaitable[Any]]
    _write: Callable[..., Awaitable[Any]]
