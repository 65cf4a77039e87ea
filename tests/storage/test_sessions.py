"""The session service over a real store: validation, cursors, isolation, locks."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from hermes_hub.infra.errors import InvalidInput, NotFound, SessionBusy
from hermes_hub.services.sessions import MAX_IMPORT_MESSAGES, Sessions, estimate_tokens, parse_time


async def test_a_session_id_is_unguessable_and_the_session_starts_empty(sessions: Sessions):
    a, b = await sessions.create("alice", "  Trip   planning "), await sessions.create("alice")
    assert a.session_id != b.session_id and len(a.session_id) >= 20
    assert (a.title, a.user_id, a.message_count) == ("Trip planning", "alice", 0)
    assert (await sessions.history("alice", a.session_id)).messages == []


async def test_appended_messages_come_back_with_tool_calls_and_a_token_estimate(sessions: Sessions):
    s = await sessions.create("alice")
    await sessions.append("alice", s.session_id, role="user", content="What is on tomorrow?")
    await sessions.append_many("alice", s.session_id, [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "calendar_query",
                                                              "arguments": {"day": "tomorrow"}}]},
        {"role": "tool", "content": '{"events": []}', "tool_call_id": "c1"},
        {"role": "assistant", "content": "我们明天去北京开会", "metadata": {"source": "model-x"}},
    ])
    msgs = (await sessions.history("alice", s.session_id)).messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert msgs[1].tool_calls[0].name == "calendar_query" and msgs[1].tool_calls[0].arguments == {"day": "tomorrow"}
    assert msgs[2].tool_call_id == "c1"
    assert msgs[3].metadata.token_estimate == estimate_tokens("我们明天去北京开会") == 9
    assert msgs[3].metadata.truncated is False and msgs[3].metadata.model_extra == {"source": "model-x"}
    assert (await sessions.get("alice", s.session_id)).message_count == 4


async def test_history_cursors_visit_every_message_once_in_order_both_ways(sessions: Sessions):
    s = await sessions.create("alice")
    await sessions.append_many("alice", s.session_id, [{"role": "user", "content": f"m{i}"} for i in range(23)])
    for newest_first in (False, True):
        seen, cursor = [], None
        for _ in range(10):
            page = await sessions.history("alice", s.session_id, limit=5, cursor=cursor, newest_first=newest_first)
            seen += [m.seq for m in page.messages]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert seen == (list(range(23, 0, -1)) if newest_first else list(range(1, 24)))


async def test_session_list_cursors_visit_every_session_once(sessions: Sessions):
    made = {(await sessions.create("alice", f"s{i}")).session_id for i in range(12)}
    seen, cursor = [], None
    for _ in range(10):
        page = await sessions.list("alice", limit=5, cursor=cursor)
        seen += [x.session_id for x in page.sessions]
        if not (cursor := page.next_cursor):
            break
    assert len(seen) == 12 and set(seen) == made


async def test_bad_cursors_and_limits_say_how_to_fix_them(sessions: Sessions):
    s = await sessions.create("alice")
    await sessions.append_many("alice", s.session_id, [{"role": "user", "content": "x"}] * 3)
    with pytest.raises(InvalidInput, match="pass the next_cursor of the previous page unchanged"):
        await sessions.history("alice", s.session_id, cursor="garbage!")
    forward = (await sessions.history("alice", s.session_id, limit=1)).next_cursor
    with pytest.raises(InvalidInput, match="continues a oldest-first listing; pass newest_first=False"):
        await sessions.history("alice", s.session_id, cursor=forward, newest_first=True)
    with pytest.raises(InvalidInput, match="is not a sessions cursor"):
        await sessions.list("alice", cursor=forward)
    with pytest.raises(InvalidInput, match="limit must be an integer from 1 to 200 .got 0.; use next_cursor"):
        await sessions.history("alice", s.session_id, limit=0)


@pytest.mark.parametrize(("message", "error"), [
    ({"role": "bot", "content": "hi"}, "role 'bot' is not valid; use one of system, user, assistant, tool"),
    ({"role": "tool", "content": "{}"}, "a tool message needs tool_call_id: the id of the assistant tool call"),
    ({"role": "user", "content": "x", "tool_call_id": "c1"}, "tool_call_id belongs on role 'tool' messages only"),
    ({"role": "user", "content": "x", "tool_calls": [{"id": "c", "name": "n"}]},
     "tool_calls belong on role 'assistant' messages only"),
    ({"role": "assistant", "content": "x", "tool_calls": [{"id": "c"}]}, "tool_calls/metadata: name: Field required"),
    ({"role": "user", "content": None}, "content must be a string .got NoneType."),
    ({"role": "user", "content": "é" * 200_000}, r"message is 400,\d+ bytes; the limit is 262,144. Split it"),
])
async def test_bad_messages_are_refused_with_the_fix_and_nothing_is_stored(sessions: Sessions, message, error):
    s = await sessions.create("alice")
    with pytest.raises(InvalidInput, match=error):
        await sessions.append("alice", s.session_id, **message)
    with pytest.raises(InvalidInput, match=r"messages\[1\]: role 'bot'"):
        await sessions.append_many("alice", s.session_id, [{"role": "user", "content": "ok"}, {"role": "bot",
                                                                                               "content": "x"}])
    assert (await sessions.history("alice", s.session_id)).messages == []


async def test_unknown_and_foreign_ids_get_the_same_not_found_for_every_operation(sessions: Sessions):
    mine = (await sessions.create("alice", "private")).session_id
    await sessions.append("alice", mine, role="user", content="secret plans")
    for sid in (mine, "ses_doesnotexist", "x" * 5000):
        ops = [
            sessions.get("bob", sid), sessions.history("bob", sid),
            sessions.append("bob", sid, role="user", content="hi"), sessions.search("bob", "secret", session_id=sid),
            sessions.rename("bob", sid, "mine"), sessions.set_summary("bob", sid, "s"), sessions.delete("bob", sid),
        ]
        for op in ops:
            with pytest.raises(NotFound, match=r"^session '.*' not found; list your sessions to see their ids$"):
                await op
        with pytest.raises(NotFound):
            async with sessions.lock("bob", sid):
                pass
    assert await sessions.search("bob", "secret") == [] and (await sessions.list("bob")).sessions == []
    assert await sessions.delete_all("bob") == 0
    assert (await sessions.get("alice", mine)).title == "private"
    assert [m.content for m in (await sessions.history("alice", mine)).messages] == ["secret plans"]


async def test_rename_summary_delete_and_delete_all(sessions: Sessions):
    a, b = await sessions.create("alice", "a"), await sessions.create("alice", "b")
    assert (await sessions.rename("alice", a.session_id, "Beijing trip")).title == "Beijing trip"
    assert (await sessions.set_summary("alice", a.session_id, "meeting")).summary == "meeting"
    with pytest.raises(InvalidInput, match="at most 200 characters"):
        await sessions.rename("alice", a.session_id, "x" * 201)
    await sessions.delete("alice", b.session_id)
    with pytest.raises(NotFound):
        await sessions.get("alice", b.session_id)
    assert await sessions.delete_all("alice") == 1 and (await sessions.list("alice")).sessions == []


async def test_search_returns_snippets_from_the_callers_sessions(sessions: Sessions):
    s = await sessions.create("alice", "Work")
    await sessions.append("alice", s.session_id, role="user", content="我们明天去北京开会")
    await sessions.append("alice", s.session_id, role="assistant", content="Noted: meeting in Beijing tomorrow.")
    (zh,) = await sessions.search("alice", "北京开会")
    assert (zh.snippet, zh.session_title, zh.seq, zh.role) == ("我们明天去**北京开会**", "Work", 1, "user")
    (en,) = await sessions.search("alice", "beijing")
    assert en.snippet == "Noted: meeting in **Beijing** tomorrow."


async def test_a_second_writer_is_refused_at_once_while_the_first_holds_the_lock(sessions: Sessions):
    s = await sessions.create("alice")
    async with sessions.lock("alice", s.session_id) as lease:
        await sessions.append("alice", s.session_id, role="user", content="turn 1", lease=lease)
        started = time.monotonic()
        with anyio.fail_after(2):
            with pytest.raises(SessionBusy, match=f"session '{s.session_id}' is busy: another writer or agent run"):
                async with sessions.lock("alice", s.session_id):
                    pass
            with pytest.raises(SessionBusy):
                await sessions.append("alice", s.session_id, role="user", content="interleaved?")
        assert time.monotonic() - started < 0.5  # refused, not queued behind the holder
        await sessions.append("alice", s.session_id, role="assistant", content="turn 2", lease=lease)
    assert [m.content for m in (await sessions.history("alice", s.session_id)).messages] == ["turn 1", "turn 2"]


async def test_the_lock_is_released_when_the_block_exits_normally_or_by_error(sessions: Sessions):
    s = await sessions.create("alice")
    with anyio.fail_after(5):
        async with sessions.lock("alice", s.session_id):
            pass
        with pytest.raises(ZeroDivisionError):  # the caller's own exception, not an ExceptionGroup
            async with sessions.lock("alice", s.session_id):
                raise ZeroDivisionError("the body failed")
        async with sessions.lock("alice", s.session_id) as lease:
            assert not lease.lost
        await sessions.append("alice", s.session_id, role="user", content="free again")


async def test_the_lock_is_released_when_its_holder_is_cancelled(sessions: Sessions):
    s = await sessions.create("alice")
    held = anyio.Event()

    async def agent_run() -> None:
        async with sessions.lock("alice", s.session_id):
            held.set()
            await anyio.sleep_forever()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent_run)
            await held.wait()
            tg.cancel_scope.cancel()
        async with sessions.lock("alice", s.session_id):
            pass


@pytest.mark.slow
async def test_a_heartbeat_keeps_a_short_lock_alive_past_its_ttl(sessions: Sessions):
    s = await sessions.create("alice")
    with anyio.fail_after(10):
        # a ttl of 1 s leaves room for a loaded machine (renewals every third of it); 0.3 s lost the lock on CI
        async with sessions.lock("alice", s.session_id, ttl=1.0) as lease:
            await anyio.sleep(2.5)  # outlive the ttl more than twice: only renewals keep the lock
            with pytest.raises(SessionBusy):
                async with sessions.lock("alice", s.session_id):
                    pass
            await sessions.append("alice", s.session_id, role="user", content="still mine", lease=lease)
            assert not lease.lost


@pytest.mark.parametrize("text, expected", [
    ("2023-05-07T14:30:00+02:00", datetime(2023, 5, 7, 12, 30, tzinfo=UTC)),
    ("2023-05-07T12:30:00Z", datetime(2023, 5, 7, 12, 30, tzinfo=UTC)),
    ("2023-05-07T12:30:00", datetime(2023, 5, 7, 12, 30, tzinfo=UTC)),  # naive: UTC
    ("2023-05-07 12:30:00.250-05:00", datetime(2023, 5, 7, 17, 30, 0, 250_000, tzinfo=UTC)),
    ("2023-05-07", datetime(2023, 5, 7, tzinfo=UTC)),
    ("2024-02-29T23:59:59+00:00", datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC)),
])
def test_times_are_read_as_iso_8601_and_kept_in_utc(text, expected):
    assert parse_time(text) == expected


@pytest.mark.parametrize("bad, shown", [
    ("yesterday", "'yesterday'"), ("2023-02-30", "'2023-02-30'"), ("", "''"), ("7 May 2023", "'7 May 2023'"),
    (1683462600, "'1683462600 (int)'"), ("x" * 500, "'" + "x" * 40 + "…'"),
])
def test_a_malformed_time_is_quoted_in_the_error_with_the_expected_form(bad, shown):
    with pytest.raises(InvalidInput) as e:
        parse_time(bad)
    assert str(e.value).startswith(f"created_at {shown} is not an ISO 8601 time; write it like "
                                   "'2023-05-07T14:30:00+02:00' or '2023-05-07T12:30:00Z'")


async def test_an_import_fills_missing_times_from_the_message_before_and_spans_the_session(sessions: Sessions):
    s = await sessions.import_session("alice", "Book club", [
        {"role": "user", "content": "no time, first"},
        {"role": "user", "content": "Sunday", "created_at": "2023-05-07T10:00:00Z"},
        {"role": "assistant", "content": "no time, after Sunday"},
        {"role": "user", "content": "Saturday, sent late", "created_at": "2023-05-06T09:00:00+00:00"},
    ])
    msgs = (await sessions.history("alice", s.session_id)).messages
    sunday, saturday = datetime(2023, 5, 7, 10, tzinfo=UTC), datetime(2023, 5, 6, 9, tzinfo=UTC)
    assert [(m.seq, m.created_at) for m in msgs] == [(1, sunday), (2, sunday), (3, sunday), (4, saturday)]
    assert (s.created_at, s.updated_at, s.message_count) == (saturday, sunday, 4)
    assert (await sessions.get("alice", s.session_id)).updated_at == sunday


async def test_an_import_without_any_time_is_stamped_now(sessions: Sessions):
    before = datetime.now(UTC)
    s = await sessions.import_session("alice", "", [{"role": "user", "content": "hi"}])
    assert before <= s.created_at <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize("messages, error", [
    ([], "messages must be a non-empty list"),
    ("hello", "messages must be a non-empty list"),
    ([{"role": "user", "content": "x"}] * (MAX_IMPORT_MESSAGES + 1),
     "5,001 messages is more than one import takes .5,000.; split the conversation into several imports, "
     "or import the first 5,000 and add the rest to that session with hermes_session_append"),
    ([{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "created_at": "May 7"}],
     r"messages\[1\]: created_at 'May 7' is not an ISO 8601 time"),
    ([{"role": "user", "content": "ok"}, {"role": "robot", "content": "x"}], r"messages\[1\]: role 'robot'"),
    ([{"role": "user", "content": "x" * 300_000}], r"messages\[0\]: message is 300,\d+ bytes; the limit"),
])
async def test_a_bad_import_is_refused_whole_and_stores_nothing(sessions: Sessions, messages, error):
    with pytest.raises(InvalidInput, match=error):
        await sessions.import_session("alice", "t", messages)
    assert (await sessions.list("alice")).sessions == []


async def test_append_keeps_the_given_time_and_the_order_of_appends(sessions: Sessions):
    s = await sessions.create("alice")
    late = await sessions.append("alice", s.session_id, role="user", content="b", created_at="2023-05-07T12:00:00")
    early = await sessions.append("alice", s.session_id, role="user", content="a", created_at="2023-05-01T12:00:00Z")
    with pytest.raises(InvalidInput, match="created_at '2023/05/07' is not an ISO 8601 time"):
        await sessions.append("alice", s.session_id, role="user", content="c", created_at="2023/05/07")
    assert (late.seq, early.seq) == (1, 2) and early.created_at == datetime(2023, 5, 1, 12, tzinfo=UTC)
    assert [m.content for m in (await sessions.history("alice", s.session_id)).messages] == ["b", "a"]
