"""Conversations kept by the hub: sessions of messages, per user, over any ``Store``.

    sessions = Sessions(store)
    s = await sessions.create("alice", title="Trip planning")
    await sessions.append("alice", s.session_id, role="user", content="我们明天去北京开会")
    page = await sessions.history("alice", s.session_id, limit=50)   # page.next_cursor for more
    hits = await sessions.search("alice", "北京")
    s2 = await sessions.import_session("alice", "From my old app", [
        {"role": "user", "content": "I moved to Oslo", "created_at": "2023-05-07T14:30:00+02:00"}])

A message's ``created_at`` is when it was said (ISO 8601; without an offset, UTC), the time of the
append if not given; ``seq`` is always the order of appends, whatever the times.

Every operation takes the caller's ``user_id`` and only ever touches that user's rows: another user's
session id raises the same ``NotFound`` as an id that never existed. Bad arguments raise
``InvalidInput`` naming the field and the fix; a session locked by an agent run raises ``SessionBusy``.
An assistant message's tool calls are stored with their secrets masked (``hermes_hub.infra.masking``).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hermes_hub.infra.errors import InvalidInput, NotFound
from hermes_hub.infra.masking import MASKER, Masker
from hermes_hub.infra.storage import Lease, Store
from hermes_hub.infra.storage.records import (
    ROLES,
    MessageRecord,
    NewMessage,
    SessionRecord,
    utcnow,
)

MAX_MESSAGE_BYTES = 256 * 1024
MAX_TITLE_CHARS = 200
MAX_PAGE = 200
MAX_ID_CHARS = 128
MAX_IMPORT_MESSAGES = 5000
MAX_IMPORT_BYTES = 64 * 1024 * 1024
TIME_EXAMPLE = "'2023-05-07T14:30:00+02:00' or '2023-05-07T12:30:00Z'"


class ToolCall(BaseModel):
    """A call an assistant message asks for; the ``tool`` message answering it carries its ``id``."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class MessageMeta(BaseModel):
    """Bookkeeping the hub adds; hosts may add their own keys beside these."""

    model_config = ConfigDict(extra="allow")
    token_estimate: int = 0
    truncated: bool = False  # the content was cut to size before it was stored


class Message(BaseModel):
    message_id: str
    session_id: str
    user_id: str
    seq: int
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    created_at: datetime
    metadata: MessageMeta = Field(default_factory=MessageMeta)


class Session(BaseModel):
    session_id: str
    user_id: str
    title: str
    summary: str = ""
    created_at: datetime
    updated_at: datetime
    message_count: int = 0


class SessionPage(BaseModel):
    sessions: list[Session]
    next_cursor: str | None = None  # pass it back as ``cursor`` for the next page; None at the end


class HistoryPage(BaseModel):
    messages: list[Message]
    next_cursor: str | None = None


class SearchResult(BaseModel):
    session_id: str
    session_title: str
    message_id: str
    seq: int
    role: str
    snippet: str
    created_at: datetime


def estimate_tokens(text: str) -> int:
    """A cheap, model-free estimate: ~4 ASCII characters per token, ~1 token per other character."""
    ascii_chars = sum(1 for c in text if c < "\x80")
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


class Sessions:
    """The session service. Stateless over its store: share one per hub."""

    def __init__(self, store: Store, *, max_message_bytes: int = MAX_MESSAGE_BYTES, masker: Masker = MASKER,
                 lock_ttl: float = 30.0) -> None:
        self.store = store
        self.max_message_bytes = max_message_bytes
        self.lock_ttl = lock_ttl  # storage.session_lock_ttl: a dead writer's session is free again after this
        self.masker = masker  # tool calls are stored with their secrets masked, as in the audit

    async def create(self, user_id: str, title: str = "") -> Session:
        now = utcnow()
        record = SessionRecord("ses_" + secrets.token_urlsafe(16), _user(user_id), _title(title), now, now)
        await self.store.create_session(record)
        return _session(record)

    async def get(self, user_id: str, session_id: str) -> Session:
        return _session(await self.store.get_session(_user(user_id), _sid(session_id)))

    async def list(self, user_id: str, *, limit: int = 20, cursor: str | None = None) -> SessionPage:
        limit = _limit(limit)
        after = None
        if cursor:
            updated, sid = _decode(cursor, "sessions")
            after = (datetime.fromtimestamp(updated, UTC), sid)
        rows = await self.store.list_sessions(_user(user_id), limit=limit + 1, after=after)
        more, rows = len(rows) > limit, rows[:limit]
        nxt = _encode("sessions", rows[-1].updated_at.timestamp(), rows[-1].id) if more else None
        return SessionPage(sessions=[_session(r) for r in rows], next_cursor=nxt)

    async def history(self, user_id: str, session_id: str, *, limit: int = 50, cursor: str | None = None,
                      newest_first: bool = False) -> HistoryPage:
        """One page of messages in order (or newest first), tool calls included."""
        limit = _limit(limit)
        after = before = None
        if cursor:
            seq, order = _decode(cursor, "history")
            if order != ("desc" if newest_first else "asc"):
                raise InvalidInput(f"this cursor continues a {'newest' if order == 'desc' else 'oldest'}-first "
                                   f"listing; pass newest_first={order == 'desc'} with it, or drop the cursor")
            after, before = (None, seq) if newest_first else (seq, None)
        rows = await self.store.list_messages(_user(user_id), _sid(session_id), limit=limit + 1, after_seq=after,
                                              before_seq=before, newest_first=newest_first)
        more, rows = len(rows) > limit, rows[:limit]
        nxt = _encode("history", rows[-1].seq, "desc" if newest_first else "asc") if more else None
        return HistoryPage(messages=[_message(r) for r in rows], next_cursor=nxt)

    async def append(self, user_id: str, session_id: str, *, role: str, content: str,
                     tool_calls: list[dict[str, Any]] | None = None, tool_call_id: str | None = None,
                     metadata: dict[str, Any] | None = None, created_at: str | datetime | None = None,
                     lease: Lease | None = None) -> Message:
        """Append one message. Pass ``lease`` when holding the session's lock (``lock``)."""
        one = {"role": role, "content": content, "tool_calls": tool_calls, "tool_call_id": tool_call_id,
               "metadata": metadata, "created_at": created_at}
        (msg,) = await self.append_many(user_id, session_id, [one], lease=lease)
        return msg

    async def append_many(self, user_id: str, session_id: str, messages: list[dict[str, Any]], *,
                          lease: Lease | None = None) -> list[Message]:
        """Append several messages contiguously in one transaction (e.g. a tool call and its results)."""
        now = utcnow()
        new = [self._validate(m, i if len(messages) > 1 else None, now)[0] for i, m in enumerate(messages)]
        rows = await self.store.append_messages(_user(user_id), _sid(session_id), new, lease=lease)
        return [_message(r) for r in rows]

    async def import_session(self, user_id: str, title: str, messages: Sequence[dict[str, Any]]) -> Session:
        """A new session holding ``messages`` (a conversation brought from elsewhere), all or nothing.

        A message without ``created_at`` takes the time of the one before it (the first given time for
        leading ones; now if no message has one); the session's created/updated times are the earliest
        and latest message times.
        """
        title = _title(title)
        if not isinstance(messages, Sequence) or isinstance(messages, str) or not messages:
            raise InvalidInput("messages must be a non-empty list of {role, content, created_at?} objects; "
                               "to start an empty session use hermes_session_create")
        if len(messages) > MAX_IMPORT_MESSAGES:
            raise InvalidInput(f"{len(messages):,} messages is more than one import takes ({MAX_IMPORT_MESSAGES:,}); "
                               "split the conversation into several imports, or import the first "
                               f"{MAX_IMPORT_MESSAGES:,} and add the rest to that session with hermes_session_append")
        now = utcnow()
        checked = [self._validate(m, i, now) for i, m in enumerate(messages)]
        total = sum(len(m.content.encode()) for m, _ in checked)
        if total > MAX_IMPORT_BYTES:
            raise InvalidInput(f"this import is {total:,} bytes of content; one import takes at most "
                               f"{MAX_IMPORT_BYTES:,}. Split the conversation into several imports, or append "
                               "the rest to the session with hermes_session_append")
        new = _fill_times(checked, now)
        times = [m.created_at for m in new]
        record = SessionRecord("ses_" + secrets.token_urlsafe(16), _user(user_id), title, min(times), max(times))
        await self.store.import_session(record, new)
        return _session(replace(record, message_count=len(new)))

    async def search(self, user_id: str, query: str, *, limit: int = 20,
                     session_id: str | None = None) -> list[SearchResult]:
        """Messages of the caller's sessions containing every word of ``query``, with snippets."""
        hits = await self.store.search_messages(_user(user_id), query, limit=_limit(limit),
                                                session_id=None if session_id is None else _sid(session_id))
        return [SearchResult(session_id=h.message.session_id, session_title=h.session_title,
                             message_id=h.message.id, seq=h.message.seq, role=h.message.role, snippet=h.snippet,
                             created_at=h.message.created_at) for h in hits]

    async def rename(self, user_id: str, session_id: str, title: str) -> Session:
        return _session(await self.store.update_session(_user(user_id), _sid(session_id), updated_at=utcnow(),
                                                        title=_title(title)))

    async def set_summary(self, user_id: str, session_id: str, summary: str) -> Session:
        return _session(await self.store.update_session(_user(user_id), _sid(session_id), updated_at=utcnow(),
                                                        summary=summary))

    async def delete(self, user_id: str, session_id: str) -> None:
        await self.store.delete_session(_user(user_id), _sid(session_id))

    async def delete_all(self, user_id: str) -> int:
        """Delete every session of the caller; return how many. Refused whole if one is busy."""
        return await self.store.delete_user_sessions(_user(user_id))

    def lock(self, user_id: str, session_id: str, *, ttl: float | None = None) -> AbstractAsyncContextManager[Lease]:
        """``async with sessions.lock(uid, sid) as lease:`` be the session's only writer (else ``SessionBusy``)."""
        return self.store.session_lock(_user(user_id), _sid(session_id), ttl=self.lock_ttl if ttl is None else ttl)

    def _validate(self, raw: dict[str, Any], index: int | None, now: datetime) -> tuple[NewMessage, bool]:
        """The message to store (at ``now`` unless it says when), and whether it gave its own time."""
        where = f"messages[{index}]: " if index is not None else ""
        if not isinstance(raw, dict):
            raise InvalidInput(f"{where}a message must be an object with role and content (got {type(raw).__name__})")
        role = raw.get("role")
        if role not in ROLES:
            raise InvalidInput(f"{where}role {role!r} is not valid; use one of {', '.join(ROLES)}")
        calls_raw = raw.get("tool_calls") or []
        call_id = raw.get("tool_call_id") or None
        if role == "tool" and not call_id:
            raise InvalidInput(f"{where}a tool message needs tool_call_id: the id of the assistant tool call "
                               "it answers")
        if role != "tool" and call_id:
            raise InvalidInput(f"{where}tool_call_id belongs on role 'tool' messages only (this one is {role!r})")
        if calls_raw and role != "assistant":
            raise InvalidInput(f"{where}tool_calls belong on role 'assistant' messages only (this one is {role!r})")
        content = raw.get("content")
        if not isinstance(content, str):
            raise InvalidInput(f"{where}content must be a string (got {type(content).__name__})")
        given = raw.get("created_at")
        at = now if given is None else parse_time(given, f"{where}created_at")
        try:
            calls = [ToolCall.model_validate(c) for c in calls_raw]
            meta = MessageMeta.model_validate(raw.get("metadata") or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise InvalidInput(f"{where}tool_calls/metadata: {loc}: {first['msg']}") from None
        call_dicts = [c.model_dump() for c in calls]
        extra = json.dumps([call_dicts, meta.model_dump()], ensure_ascii=False)
        size = len(content.encode()) + len(extra.encode())
        if size > self.max_message_bytes:
            raise InvalidInput(f"{where}message is {size:,} bytes; the limit is {self.max_message_bytes:,}. "
                               "Split it into several messages, or store a summary and keep the full text elsewhere")
        # measured first, masked second: the cap bounds the masking's work. The calls were made already,
        # so the stored copy (the agent's own calls included) need not keep their secrets.
        call_dicts = [{**c, "arguments": self.masker(c["arguments"])} for c in call_dicts]
        if not meta.token_estimate:
            meta.token_estimate = estimate_tokens(content) + (estimate_tokens(json.dumps(call_dicts)) if calls else 0)
        return NewMessage("msg_" + secrets.token_urlsafe(12), role, content, at, call_dicts, call_id,
                          meta.model_dump()), given is not None


def parse_time(value: Any, field: str = "created_at") -> datetime:
    """An ISO 8601 time as an aware UTC datetime; without an offset it is UTC, a bare date its midnight.

    >>> parse_time("2023-05-07T14:30:00+02:00")
    datetime.datetime(2023, 5, 7, 12, 30, tzinfo=datetime.timezone.utc)
    """
    if isinstance(value, datetime):
        t: datetime | None = value
    else:
        t = None
        if isinstance(value, str) and len(value) <= 64:
            try:
                t = datetime.fromisoformat(value.strip())
            except ValueError:
                pass
    if t is not None:
        try:
            return (t.replace(tzinfo=UTC) if t.tzinfo is None else t).astimezone(UTC)
        except OverflowError:
            pass
    text = value if isinstance(value, str) else f"{value!r} ({type(value).__name__})"
    shown = text[:40] + "…" if len(text) > 40 else text
    raise InvalidInput(f"{field} {shown!r} is not an ISO 8601 time; write it like {TIME_EXAMPLE} "
                       "(without an offset it is read as UTC; a date alone means its midnight)")


def _fill_times(checked: list[tuple[NewMessage, bool]], now: datetime) -> list[NewMessage]:
    """Give each message without a time the time of the message before it (leading ones: the first given)."""
    first = next((m.created_at for m, given in checked if given), now)
    out, last = [], first
    for m, given in checked:
        last = m.created_at if given else last
        out.append(m if given else replace(m, created_at=last))
    return out


def _session(r: SessionRecord) -> Session:
    return Session(session_id=r.id, user_id=r.user_id, title=r.title, summary=r.summary, created_at=r.created_at,
                   updated_at=r.updated_at, message_count=r.message_count)


def _message(r: MessageRecord) -> Message:
    return Message(message_id=r.id, session_id=r.session_id, user_id=r.user_id, seq=r.seq, role=r.role,
                   content=r.content, tool_calls=r.tool_calls, tool_call_id=r.tool_call_id, created_at=r.created_at,
                   metadata=r.metadata)


def _user(user_id: str) -> str:
    if not isinstance(user_id, str) or not user_id:
        raise InvalidInput("user_id must be a non-empty string (the caller's identity)")
    return user_id


def _sid(session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id or len(session_id) > MAX_ID_CHARS:
        shown = str(session_id)[:40] + ("…" if len(str(session_id)) > 40 else "")
        raise NotFound("session", shown, "list your sessions to see their ids")
    return session_id


def _title(title: str) -> str:
    if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title must be a string of at most {MAX_TITLE_CHARS} characters")
    return " ".join(title.split())


def _limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE} (got {limit!r}); use next_cursor for more")
    return limit


def _encode(kind: str, *values: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps([kind, *values]).encode()).decode().rstrip("=")


def _decode(cursor: str, kind: str) -> list[Any]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(raw, list) or raw[0] != kind or len(raw) != 3:
            raise ValueError
        return raw[1:]
    except (ValueError, TypeError, IndexError):
        raise InvalidInput(f"cursor {cursor[:40]!r} is not a {kind} cursor; pass the next_cursor of the previous "
                           "page unchanged, or omit it to start from the beginning") from None
