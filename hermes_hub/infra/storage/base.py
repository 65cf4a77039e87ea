"""The Store protocol: everything the hub keeps, behind one async interface and one contract suite.

Both backends (``sqlite``, ``postgres``) implement every method below; callers (``sessions``,
``audit``, ``identity``, ``memory``, the worker and the agent loop) never see SQL. The protocol is the
sum of small per-concept parts (newer ones in their own modules), so each user names the part it
needs: memory readers ``MemoryStore`` and ``RecallStore``, the indexer ``IndexerStore``.

Rules every backend keeps, each pinned by ``tests/storage/test_store_contract.py``:

* every row carries ``user_id`` and every user-facing read filters by it; a session that exists but
  belongs to someone else raises exactly the ``NotFound`` a nonexistent id raises;
* writes are never interleaved: a multi-message append lands contiguously, ``seq`` has no gaps;
* history and session lists are keyset-paginated (cost follows the page, not the history);
* a session lock is a row with an owner and an expiry, so it works across processes sharing a
  database; a second acquirer is refused at once, never queued.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from hermes_hub.infra.storage.approvals import ApprovalStore
from hermes_hub.infra.storage.cases import EvalCaseStore
from hermes_hub.infra.storage.layers import ProvenanceStore, WorkingStore
from hermes_hub.infra.storage.oauth import OAuthStore
from hermes_hub.infra.storage.pins import PinStore
from hermes_hub.infra.storage.records import (
    ArtifactRecord,
    AuditRecord,
    ExtractionJob,
    Lease,
    LoginRecord,
    MemoryEvent,
    MemoryRecord,
    MessageRecord,
    NewMessage,
    RankedRow,
    RunRecord,
    SealedRecord,
    SearchHit,
    SessionRecord,
    SummaryJob,
    TokenRecord,
)
from hermes_hub.infra.storage.timetable import ScheduleStore


class SessionStore(Protocol):
    async def create_session(self, record: SessionRecord) -> None: ...

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        """Raise ``NotFound`` unless the session exists *and* belongs to ``user_id``."""

    async def list_sessions(
        self, user_id: str, *, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[SessionRecord]:
        """Most recently updated first; ``after`` is the (updated_at, id) of the previous page's last row."""

    async def update_session(
        self, user_id: str, session_id: str, *, updated_at: datetime, title: str | None = None,
        summary: str | None = None,
    ) -> SessionRecord: ...

    async def delete_session(self, user_id: str, session_id: str) -> None:
        """Delete the session and its messages; ``NotFound`` if it is not the caller's."""

    async def delete_user_sessions(self, user_id: str) -> int:
        """Delete every session of ``user_id``; return how many."""


class MessageStore(Protocol):
    async def append_messages(
        self, user_id: str, session_id: str, messages: Sequence[NewMessage], *, lease: Lease | None = None
    ) -> list[MessageRecord]:
        """Append in one transaction and return the stored rows with their ``seq``.

        Without ``lease`` the session must not be locked by anyone (``SessionBusy`` otherwise); with
        one, the lease must still hold the lock. ``NotFound`` if the session is not the caller's.
        """

    async def import_session(self, record: SessionRecord, messages: Sequence[NewMessage]) -> list[MessageRecord]:
        """Create ``record`` holding ``messages`` (seq 1, 2, …) in one transaction: all of it or nothing."""

    async def list_messages(
        self, user_id: str, session_id: str, *, limit: int, after_seq: int | None = None,
        before_seq: int | None = None, newest_first: bool = False,
    ) -> list[MessageRecord]:
        """One page of history by ``seq`` (exclusive bounds). ``NotFound`` if not the caller's session."""

    async def search_messages(
        self, user_id: str, query: str, *, limit: int, session_id: str | None = None
    ) -> list[SearchHit]:
        """Messages of the caller containing every term of ``query`` (case-insensitive substrings, any
        language; see ``storage.search``), newest first, each with a snippet."""


class SessionLockStore(Protocol):
    async def acquire_session_lock(self, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
        """Take the lock if it is free or expired; False if someone else holds it. ``NotFound`` as usual."""

    async def renew_session_lock(self, session_id: str, owner: str, ttl: float) -> bool:
        """Push the expiry out; False if ``owner`` no longer holds the lock."""

    async def release_session_lock(self, session_id: str, owner: str) -> None: ...

    def session_lock(
        self, user_id: str, session_id: str, *, ttl: float = 30.0
    ) -> AbstractAsyncContextManager[Lease]:
        """``async with store.session_lock(uid, sid) as lease:`` hold the lock, heartbeat, release on exit.

        Raises ``SessionBusy`` immediately if another holder has it.
        """


class TokenStore(Protocol):
    async def add_token(self, record: TokenRecord) -> None: ...

    async def find_token(self, token_hash: str) -> TokenRecord | None:
        """The live (unrevoked) token with this hash, if any."""

    async def list_tokens(self, user_id: str | None = None) -> list[TokenRecord]: ...

    async def revoke_token(self, token_id: str, *, at: datetime) -> bool: ...


class LoginStore(Protocol):
    """The status page's login sessions, found by the hash of the id in the browser's cookie."""

    async def add_login(self, record: LoginRecord) -> None: ...

    async def find_login(self, id_hash: str) -> LoginRecord | None: ...

    async def touch_login(self, id_hash: str, *, at: datetime) -> None:
        """Move the login's ``seen_at`` (its idle expiry counts from there)."""

    async def delete_login(self, id_hash: str) -> bool: ...

    async def prune_logins(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete logins idle since ``seen_before`` or opened before ``created_before``; return how many."""


class SealedStore(Protocol):
    """Secrets sealed by ``hermes_hub.services.vault`` (OAuth grants, values a person set), by user, kind and name.

    The store holds only ciphertext; ``put_sealed`` replaces the row of the same user, kind and name."""

    async def put_sealed(self, record: SealedRecord) -> None: ...

    async def get_sealed(self, user_id: str, kind: str, name: str) -> SealedRecord | None: ...

    async def delete_sealed(self, user_id: str, kind: str, name: str) -> bool: ...

    async def list_sealed(self, user_id: str | None = None, kind: str | None = None) -> list[SealedRecord]:
        """Every row of the user (all users when None) and kind (all kinds when None), by user, kind, name."""


class AuditStore(Protocol):
    async def add_audit(self, record: AuditRecord) -> int: ...

    async def add_audits(self, records: list[AuditRecord]) -> None:
        """Write several rows in one transaction (the background audit writer's batches)."""

    async def query_audit(
        self, *, user_id: str | None = None, tool: str | None = None, since: datetime | None = None,
        limit: int = 100,
    ) -> list[AuditRecord]:
        """Newest first. ``user_id=None`` means every user: only admins' code paths may pass it."""

    async def audit_days(self, since: datetime, min_days: int, limit: int) -> list[tuple[str, str, int, int]]:
        """``(user, tool, days, calls)`` of the tools each user called successfully on ``min_days`` or more UTC
        days since ``since``: by user, most days (then calls) first, at most ``limit`` rows."""

    async def prune_audit(self, before: datetime) -> int: ...


class MemoryStore(Protocol):
    """Long-term memories and their history (``hermes_hub.services.memory``)."""

    async def add_memory(self, record: MemoryRecord, event: MemoryEvent, *, key: str,
                         supersedes: str | None = None) -> None:
        """Insert with its lexical terms and first history event; ``key`` is the normalised text
        (duplicates share it); ``supersedes`` (the same user's, else ``NotFound``) is marked
        replaced by it, with an event of its own."""

    async def find_duplicate_memory(self, user_id: str, key: str) -> str | None:
        """The user's live memory with this normalised text, if any."""

    async def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord:
        """``NotFound`` unless it exists *and* belongs to ``user_id``."""

    async def list_memories(self, user_id: str, *, state: str | None = None, kind: str | None = None,
                            limit: int = 50, before_pk: int | None = None,
                            include_superseded: bool = True) -> list[tuple[int, MemoryRecord]]:
        """Newest first, ``(pk, record)``; page with ``before_pk`` = the last pk of the previous page."""

    async def set_memory_state(self, user_id: str, memory_id: str, state: str, event: MemoryEvent,
                               ) -> MemoryRecord: ...

    async def archive_idle_memories(self, before: datetime, *, at: datetime) -> int: ...

    async def delete_memories(self, user_id: str, memory_id: str | None = None) -> int:
        """Forget one memory (or all of the user's): row, lexical terms, vectors and history."""

    async def touch_memories(self, user_id: str, memory_ids: Sequence[str], *, at: datetime) -> None: ...

    async def count_memories(self, user_id: str | None = None) -> dict[str, int]:
        """Memories by state: ``user_id``'s, or everyone's (None, for admins)."""
        ...

    async def memory_events(self, user_id: str, memory_id: str) -> list[MemoryEvent]: ...


class RecallStore(Protocol):
    """What recall reads: lexical matches, nearest vectors, and the rows they point at."""

    async def lexical_search(self, source: str, user_id: str, match: str, limit: int) -> list[RankedRow]:
        """BM25 over ``memories`` or ``messages`` of one user (lower score is better)."""

    async def messages_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, tuple[Any, ...]]: ...

    async def memories_by_pk(self, user_id: str, pks: Sequence[int]) -> dict[int, MemoryRecord]: ...

    async def nearest(self, table: str, user_id: str, vector: Sequence[float], k: int) -> list[RankedRow]:
        """The ``k`` nearest of one user's vectors (cosine distance, lower is better)."""

    async def index_mark(self, mark: str) -> int:
        """The last pk an index has covered (0 when it has not started)."""

    async def vectors_between(self, table: str, user_id: str, after_pk: int, upto_pk: int) -> list[tuple[int, bytes]]:
        """(pk, float32 bytes) of one user's vectors in ``(after_pk, upto_pk]``, for an in-process index."""


class IndexerStore(Protocol):
    """The background indexer's internals: index marks, claimed batches, the text index and vector tables."""

    async def pending_index(self, source: str, mark: str) -> int: ...

    async def unindexed(self, source: str, mark: str, limit: int, *, owner: str | None = None,
                        lease: float = 60.0) -> list[tuple[int, str, str]]:
        """(pk, user_id, text) of the next rows past the mark, oldest first. With ``owner``, they are a
        batch that ``owner`` claims for ``lease`` seconds: no other owner gets them until the lease runs
        out (renew it with ``renew_index_claim``), and the write that finishes it passes ``owner``."""

    async def unindexed_messages(self, mark: str, limit: int, *, owner: str | None = None,
                                 lease: float = 60.0) -> list[tuple[int, str, str, str]]:
        """(pk, user_id, content, the previous message's content) past the mark, oldest first (``owner``
        and ``lease`` as in ``unindexed``)."""

    async def renew_index_claim(self, mark: str, owner: str, *, lease: float = 60.0) -> bool:
        """Keep ``owner``'s batch of the index ``mark`` for ``lease`` more seconds; False if it lost it."""

    async def index_message_terms(self, rows: Sequence[tuple[int, str, str]], *, mark: str, last_pk: int,
                                  owner: str | None = None) -> bool:
        """Write ``(pk, terms, context terms)`` and move the mark, in one transaction. With ``owner``:
        only while its claim on the batch holds; False (nothing written) once another owner took it."""

    async def ensure_vector_table(self, source: str, embedder: str, dims: int) -> str: ...

    async def add_vectors(self, table: str, rows: Sequence[tuple[int, str, Sequence[float]]], *, mark: str,
                          last_pk: int, owner: str | None = None) -> bool:
        """Write the vectors and move the index mark in one transaction (each row indexed once); with
        ``owner`` as in ``index_message_terms``."""

    async def reset_message_terms(self, mark: str) -> None: ...

    async def drop_vector_tables(self, embedder: str | None = None) -> list[str]:
        """Drop the vector tables (of one embedder, or all) and their marks; return their names."""


class ExtractionQueue(Protocol):
    """New conversation messages waiting for the memory judge, as durable jobs with leases."""

    async def schedule_extraction(self, limit: int = 1000) -> int:
        """Turn messages past the queue's mark into one job per session (and move the mark), atomically."""

    async def claim_extraction(self, owner: str, *, lease: float) -> ExtractionJob | None:
        """Hold the oldest ready job (or one whose holder's lease expired) for ``lease`` seconds."""

    async def renew_extraction(self, job_id: int, owner: str, *, lease: float) -> bool:
        """Push the lease out while its holder works; False if it lost the job."""

    async def extraction_messages(self, job: ExtractionJob, *, context: int) -> list[tuple[Any, ...]]: ...

    async def finish_extraction(self, job_id: int, owner: str,
                                writes: Sequence[tuple[MemoryRecord, str, MemoryEvent, str | None]],
                                events: Sequence[MemoryEvent], result: dict[str, Any]) -> bool:
        """Write the decisions and mark the job done in one transaction; False if ``owner`` lost it."""

    async def fail_extraction(self, job_id: int, owner: str, error: str, *, retry_in: float | None) -> None: ...

    async def extraction_counts(self) -> dict[str, int]: ...


class SummaryQueue(Protocol):
    """Durable requests to fold a session's older messages into its stored summary (one job per session)."""

    async def request_summary(self, user_id: str, session_id: str, upto_seq: int, *, min_new: int = 1) -> bool:
        """Ask for messages up to ``upto_seq`` to be folded in (raising an open request's bound); False when
        fewer than ``min_new`` of them are outside the summary, or the session is not ``user_id``'s."""

    async def claim_summary(self, owner: str, *, lease: float) -> SummaryJob | None:
        """The oldest ready job (or one whose holder's lease ran out), now held by ``owner``."""

    async def renew_summary(self, session_id: str, owner: str, *, lease: float) -> bool: ...

    async def finish_summary(self, session_id: str, owner: str, summary: str) -> bool:
        """Store ``summary`` as covering the claimed messages and close the job (or re-open it when more
        was asked meanwhile), in one transaction; False, writing nothing, if ``owner`` lost the job."""

    async def fail_summary(self, session_id: str, owner: str, error: str, *, retry_in: float | None) -> None: ...

    async def summary_counts(self) -> dict[str, int]: ...


class RunStore(Protocol):
    """Agent runs and their traces; another user's run id raises the ``NotFound`` of a missing one."""

    async def add_run(self, record: RunRecord) -> None: ...

    async def get_run(self, user_id: str, run_id: str) -> RunRecord: ...

    async def list_runs(self, user_id: str, *, limit: int = 20) -> list[RunRecord]:
        """The user's runs, newest first."""

    async def rate_run(self, user_id: str, run_id: str, rating: str, comment: str | None) -> RunRecord: ...


class ArtifactStore(Protocol):
    """Whole tool results of agent runs; another user's artifact id raises the ``NotFound`` of a missing one,
    and an artifact goes with the session that made it."""

    async def add_artifact(self, record: ArtifactRecord) -> None: ...

    async def get_artifact(self, user_id: str, artifact_id: str, *, offset: int = 0,
                           limit: int | None = None) -> ArtifactRecord:
        """The artifact with ``text`` its characters ``offset`` to ``offset + limit`` (``chars``: the whole length)."""

    async def prune_artifacts(self, before: datetime) -> int: ...

    async def artifact_counts(self, user_id: str | None) -> dict[str, int]:
        """``{"count", "chars"}`` of the user's artifacts (None: everyone's)."""


@runtime_checkable
class Store(SessionStore, MessageStore, SessionLockStore, TokenStore, LoginStore, OAuthStore, AuditStore, MemoryStore,
            RecallStore, IndexerStore, ExtractionQueue, SummaryQueue, RunStore, SealedStore, PinStore, ArtifactStore,
            ApprovalStore, EvalCaseStore, ScheduleStore, ProvenanceStore, WorkingStore, Protocol):
    """Everything the hub keeps. Obtain one with ``hermes_hub.infra.storage.open_store(url)``."""

    url: str
