"""Rows as both dialects keep them: column lists, value conversions and row-to-record mapping.

SQLite and PostgreSQL store the same columns with the same encodings (times as epoch seconds, JSON as
text), so a row read by either becomes a record here; the dialects differ only in SQL. A PostgreSQL
``Record`` is passed as ``tuple(row)``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from hermes_hub.infra.errors import NotFound
from hermes_hub.infra.storage.records import (
    AuditRecord,
    LoginRecord,
    MemoryRecord,
    MessageRecord,
    OAuthGrantRecord,
    OAuthTokenRecord,
    PinRecord,
    RunRecord,
    SealedRecord,
    SessionRecord,
    TokenRecord,
)

SESSION_COLS = "id, user_id, title, created_at, updated_at, summary, message_count"
MESSAGE_COLS = ("m.id, m.session_id, m.user_id, m.seq, m.role, m.content, m.created_at, m.tool_calls, "
                "m.tool_call_id, m.metadata")
TOKEN_COLS = "id, token_hash, user_id, role, name, created_at, revoked_at"
LOGIN_COLS = "id_hash, token_hash, user_id, created_at, seen_at"
SEALED_COLS = "user_id, kind, name, key_id, sealed, updated_at"
GRANT_COLS = "id, user_id, role, client_id, client_name, resource, scopes, created_at, revoked_at"
OAUTH_TOKEN_COLS = "token_hash, kind, grant_id, client_id, data, created_at, expires_at, used_at"
PIN_COLS = "server, tool, digest, definition, pinned_at, pinned_by, seen_digest, seen_definition, seen_at"
AUDIT_COLS = ("id, at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, result_size, run_id, "
              "call_id")
AUDIT_INSERT_COLS = ("at, user_id, session_id, tool, server, arguments, outcome, error, duration_ms, result_size, "
                     "run_id, call_id")
RUN_COLS = ("run_id, user_id, session_id, profile, task, started_at, ended_at, stop_reason, rounds, input_tokens, "
            "output_tokens, answer, trace, rating, comment")
MEMORY_COLS = ("id, user_id, text, kind, confidence, source, created_at, event_time, last_recalled_at, recall_count, "
               "superseded_by, superseded_at, state, flags")
JOB_COLS = "id, user_id, session_id, first_pk, last_pk, attempts"
SCHEDULE_MARK = "extraction_messages"  # the extraction queue's index mark: messages up to it are scheduled

SESSION_HINT = "list your sessions to see their ids"
MEMORY_HINT = "list your memories to see their ids"
RUN_HINT = "list your runs with hermes_trace_list"
ARTIFACT_HINT = "artifact ids are in the tool results of agent runs; they expire after artifacts.keep_days"
_NAME_RE = re.compile(r"^[a-z0-9_]+$")
_EXPLICIT = '{"type":"explicit"}'  # the commonest memory source, as ``dumps`` writes it


def ts(value: datetime) -> float:
    return value.timestamp()


def dt(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def dumps(value: Any) -> str:
    """Compact JSON (tool calls, metadata, memory sources and event details)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loose_dumps(value: Any) -> str:
    """JSON of anything a tool handed over, unknown types as strings (audited arguments, traces)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def artifact_not_found(artifact_id: str) -> NotFound:
    return NotFound("artifact", artifact_id, ARTIFACT_HINT)


def session_not_found(session_id: str) -> NotFound:
    return NotFound("session", session_id, SESSION_HINT)


def memory_not_found(memory_id: str) -> NotFound:
    return NotFound("memory", memory_id, MEMORY_HINT)


def run_not_found(run_id: str) -> NotFound:
    return NotFound("run", run_id, RUN_HINT)


def session_record(row: tuple[Any, ...]) -> SessionRecord:
    sid, uid, title, created, updated, summary, count = row
    return SessionRecord(sid, uid, title, dt(created), dt(updated), summary, count)


def message_record(row: tuple[Any, ...]) -> MessageRecord:
    mid, sid, uid, seq, role, content, created, calls, call_id, meta = row
    return MessageRecord(mid, sid, uid, seq, role, content, dt(created), json.loads(calls) if calls else [],
                         call_id, json.loads(meta) if meta else {})


def token_record(row: tuple[Any, ...]) -> TokenRecord:
    tid, h, uid, role, name, created, revoked = row
    return TokenRecord(tid, h, uid, role, name, dt(created), dt(revoked) if revoked is not None else None)


def sealed_record(row: tuple[Any, ...]) -> SealedRecord:
    uid, kind, name, key_id, sealed, updated = row
    return SealedRecord(uid, kind, name, key_id, bytes(sealed), dt(updated))


def login_record(row: tuple[Any, ...]) -> LoginRecord:
    id_hash, token_hash, uid, created, seen = row
    return LoginRecord(id_hash, token_hash, uid, dt(created), dt(seen))


def grant_record(row: tuple[Any, ...]) -> OAuthGrantRecord:
    gid, uid, role, cid, name, resource, scopes, created, revoked = row
    return OAuthGrantRecord(gid, uid, role, cid, name, resource, scopes, dt(created),
                            dt(revoked) if revoked is not None else None)


def oauth_token_record(row: tuple[Any, ...]) -> OAuthTokenRecord:
    h, kind, gid, cid, data, created, expires, used = row
    return OAuthTokenRecord(h, kind, gid, cid, data, dt(created), dt(expires), dt(used) if used is not None else None)


def pin_record(row: tuple[Any, ...]) -> PinRecord:
    server, tool, digest, definition, pinned_at, by, seen_digest, seen_definition, seen_at = row
    return PinRecord(server, tool, digest, json.loads(definition), dt(pinned_at), by, seen_digest,
                     None if seen_definition is None else json.loads(seen_definition),
                     None if seen_at is None else dt(seen_at))


def pin_values(rec: PinRecord) -> tuple[Any, ...]:
    """The values of ``PIN_COLS``, in order."""
    return (rec.server, rec.tool, rec.digest, dumps(rec.definition), ts(rec.pinned_at), rec.pinned_by,
            rec.seen_digest, None if rec.seen_definition is None else dumps(rec.seen_definition),
            None if rec.seen_at is None else ts(rec.seen_at))


def audit_record(row: tuple[Any, ...]) -> AuditRecord:
    aid, at, uid, sid, tool, server, arguments, outcome, error, ms, size, run, call = row
    return AuditRecord(dt(at), uid, tool, outcome, ms, server, sid, json.loads(arguments), error, size, aid, run, call)


def audit_values(rec: AuditRecord) -> tuple[Any, ...]:
    """The values of ``AUDIT_INSERT_COLS``, in order."""
    return (ts(rec.at), rec.user_id, rec.session_id, rec.tool, rec.server, loose_dumps(rec.arguments), rec.outcome,
            rec.error, rec.duration_ms, rec.result_size, rec.run_id, rec.call_id)


def run_record(row: tuple[Any, ...]) -> RunRecord:
    (rid, uid, sid, profile, task, started, ended, stop, rounds, tin, tout, answer, trace, rating, comment) = row
    return RunRecord(rid, uid, sid, profile, task, dt(started), dt(ended), stop, rounds, tin, tout, answer,
                     json.loads(trace), rating, comment)


def run_values(r: RunRecord) -> tuple[Any, ...]:
    """The values of ``RUN_COLS``, in order."""
    return (r.run_id, r.user_id, r.session_id, r.profile, r.task, ts(r.started_at), ts(r.ended_at), r.stop_reason,
            r.rounds, r.input_tokens, r.output_tokens, r.answer, loose_dumps(r.trace), r.rating, r.comment)


def memory_record(row: tuple[Any, ...]) -> MemoryRecord:
    """A row as a record (recall builds one per candidate: kept cheap, a third of a load at 100k)."""
    (mid, uid, text, kind, conf, source, created, event, recalled, count, sup_by, sup_at, state, flags) = row
    return MemoryRecord(mid, uid, text, kind, conf, {"type": "explicit"} if source == _EXPLICIT else json.loads(source),
                        dt(created), None if event is None else dt(event), None if recalled is None else dt(recalled),
                        count, sup_by, None if sup_at is None else dt(sup_at), state,
                        tuple(f for f in flags.split(",") if f) if flags else ())


def vector_table(source: str, embedder: str, dims: int) -> str:
    """The name of the vector table of ``source`` for one embedder (the same in both dialects)."""
    tag = re.sub(r"[^a-z0-9]+", "_", embedder.lower()).strip("_")
    name = f"vec_{source}_{tag}_{dims}"
    if not _NAME_RE.match(name):
        raise ValueError(f"bad vector table name {name!r}")
    return name
