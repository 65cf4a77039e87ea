"""The Store contract: every backend must pass this file unchanged (see ``BACKENDS`` in conftest)."""

from __future__ import annotations

import secrets
from datetime import timedelta

import anyio
import pytest

from hermes_hub.infra.errors import InvalidInput, NotFound, SessionBusy
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.locks import Lease
from hermes_hub.infra.storage.records import (
    AuditRecord,
    LoginRecord,
    MemoryEvent,
    MemoryRecord,
    NewMessage,
    SessionRecord,
    TokenRecord,
    utcnow,
)
from tests.support import until


async def new_session(store: Store, user: str = "alice", title: str = "t") -> str:
    now = utcnow()
    sid = "ses_" + secrets.token_urlsafe(8)
    await store.create_session(SessionRecord(sid, user, title, now, now))
    return sid


def msg(content: str, role: str = "user", **kw: object) -> NewMessage:
    return NewMessage("msg_" + secrets.token_urlsafe(8), role, content, utcnow(), **kw)  # type: ignore[arg-type]


async def test_the_backend_implements_the_whole_store_protocol(store: Store):
    assert isinstance(store, Store)


async def test_a_created_session_reads_back_for_its_owner_only(store: Store):
    sid = await new_session(store, "alice", "Trip")
    got = await store.get_session("alice", sid)
    assert (got.id, got.user_id, got.title, got.message_count) == (sid, "alice", "Trip", 0)
    with pytest.raises(NotFound) as other:
        await store.get_session("bob", sid)
    with pytest.raises(NotFound) as missing:
        await store.get_session("bob", "ses_nope")
    assert str(other.value).replace(sid, "ID") == str(missing.value).replace("ses_nope", "ID")


async def test_appends_get_contiguous_seqs_and_keep_tool_calls_and_metadata(store: Store):
    sid = await new_session(store)
    call = {"id": "c1", "name": "calendar_query", "arguments": {"day": "明天"}}
    rows = await store.append_messages("alice", sid, [
        msg("hi"), msg("", "assistant", tool_calls=[call]), msg("{}", "tool", tool_call_id="c1"),
    ])
    assert [r.seq for r in rows] == [1, 2, 3]
    more = await store.append_messages("alice", sid, [msg("next", metadata={"token_estimate": 1})])
    assert more[0].seq == 4
    page = await store.list_messages("alice", sid, limit=10)
    assert [m.seq for m in page] == [1, 2, 3, 4]
    assert page[1].tool_calls == [call] and page[2].tool_call_id == "c1" and page[3].metadata == {"token_estimate": 1}
    assert (await store.get_session("alice", sid)).message_count == 4


async def test_history_pages_by_seq_in_both_directions(store: Store):
    sid = await new_session(store)
    await store.append_messages("alice", sid, [msg(f"m{i}") for i in range(1, 11)])
    assert [m.content for m in await store.list_messages("alice", sid, limit=3)] == ["m1", "m2", "m3"]
    assert [m.seq for m in await store.list_messages("alice", sid, limit=3, after_seq=3)] == [4, 5, 6]
    assert [m.seq for m in await store.list_messages("alice", sid, limit=3, newest_first=True)] == [10, 9, 8]
    assert [m.seq for m in await store.list_messages("alice", sid, limit=3, before_seq=8, newest_first=True)] == [7, 6, 5]
    assert await store.list_messages("alice", sid, limit=3, after_seq=10) == []


async def test_sessions_list_most_recent_first_with_a_keyset(store: Store):
    ids = [await new_session(store, title=f"s{i}") for i in range(5)]
    await new_session(store, "bob")
    await store.append_messages("alice", ids[0], [msg("bump")])
    first = await store.list_sessions("alice", limit=3)
    assert first[0].id == ids[0]
    rest = await store.list_sessions("alice", limit=3, after=(first[-1].updated_at, first[-1].id))
    assert sorted(s.id for s in first + rest) == sorted(ids) and len(rest) == 2


async def test_update_changes_only_the_given_fields(store: Store):
    sid = await new_session(store, title="old")
    got = await store.update_session("alice", sid, updated_at=utcnow(), summary="talked about Beijing")
    assert (got.title, got.summary) == ("old", "talked about Beijing")
    got = await store.update_session("alice", sid, updated_at=utcnow(), title="new")
    assert (got.title, got.summary) == ("new", "talked about Beijing")


async def test_search_finds_chinese_and_english_substrings_with_marked_snippets(store: Store):
    sid = await new_session(store, title="Work")
    await store.append_messages("alice", sid, [
        msg("我们明天去北京开会，讨论明年的预算。"), msg("The quarterly BUDGET review moved to Friday."), msg("unrelated"),
    ])
    (hit,) = await store.search_messages("alice", "北京开会", limit=10)
    assert "**北京开会**" in hit.snippet and hit.session_title == "Work" and hit.message.seq == 1
    (two,) = await store.search_messages("alice", "北京", limit=10)  # two characters: below a trigram
    assert two.message.seq == 1 and "**北京**" in two.snippet
    (en,) = await store.search_messages("alice", "budget friday", limit=10)
    assert en.message.seq == 2 and "**BUDGET**" in en.snippet and "**Friday**" in en.snippet
    assert await store.search_messages("alice", "budget 北京", limit=10) == []  # every term must match
    assert [h.message.seq for h in await store.search_messages("alice", "预算 北京", limit=10)] == [1]


async def test_search_stays_within_the_callers_sessions_and_the_one_asked_for(store: Store):
    a1, a2 = await new_session(store), await new_session(store)
    b = await new_session(store, "bob")
    for sid, user in ((a1, "alice"), (a2, "alice"), (b, "bob")):
        await store.append_messages(user, sid, [msg("shared secret phrase 会议")])
    assert {h.message.session_id for h in await store.search_messages("alice", "secret", limit=10)} == {a1, a2}
    assert {h.message.session_id for h in await store.search_messages("alice", "会议", limit=10)} == {a1, a2}
    assert [h.message.session_id for h in await store.search_messages("alice", "phrase", limit=10, session_id=a2)] == [a2]
    with pytest.raises(NotFound):
        await store.search_messages("alice", "phrase", limit=10, session_id=b)
    with pytest.raises(InvalidInput, match="query is empty"):
        await store.search_messages("alice", "   ", limit=10)


async def test_another_users_session_is_not_found_for_every_operation(store: Store):
    sid = await new_session(store, "alice")
    await store.append_messages("alice", sid, [msg("private")])
    attempts = [
        store.get_session("bob", sid),
        store.list_messages("bob", sid, limit=5),
        store.append_messages("bob", sid, [msg("intrusion")]),
        store.update_session("bob", sid, updated_at=utcnow(), title="mine now"),
        store.delete_session("bob", sid),
        store.search_messages("bob", "private", limit=5, session_id=sid),
        store.acquire_session_lock("bob", sid, "bob-owner", 30),
    ]
    for attempt in attempts:
        with pytest.raises(NotFound, match=f"session '{sid}' not found"):
            await attempt
    assert await store.search_messages("bob", "private", limit=5) == []
    assert await store.delete_user_sessions("bob") == 0
    assert [m.content for m in await store.list_messages("alice", sid, limit=5)] == ["private"]
    assert (await store.get_session("alice", sid)).title == "t"


async def test_deleting_a_session_removes_its_messages_from_history_and_search(store: Store):
    keep, gone = await new_session(store), await new_session(store)
    await store.append_messages("alice", keep, [msg("keep this budget")])
    await store.append_messages("alice", gone, [msg("drop this budget")])
    await store.delete_session("alice", gone)
    with pytest.raises(NotFound):
        await store.list_messages("alice", gone, limit=5)
    assert [h.message.session_id for h in await store.search_messages("alice", "budget", limit=5)] == [keep]


async def test_deleting_all_of_a_users_sessions_leaves_other_users_alone(store: Store):
    for _ in range(3):
        await store.append_messages("alice", await new_session(store), [msg("budget")])
    b = await new_session(store, "bob")
    await store.append_messages("bob", b, [msg("budget")])
    assert await store.delete_user_sessions("alice") == 3
    assert await store.list_sessions("alice", limit=10) == []
    assert await store.search_messages("alice", "budget", limit=10) == []
    assert len(await store.search_messages("bob", "budget", limit=10)) == 1


async def test_a_held_lock_refuses_a_second_holder_and_lockless_writers(store: Store):
    sid = await new_session(store)
    assert await store.acquire_session_lock("alice", sid, "one", 30)
    assert not await store.acquire_session_lock("alice", sid, "two", 30)
    with pytest.raises(SessionBusy, match="is busy"):
        await store.append_messages("alice", sid, [msg("sneaking in")])
    with pytest.raises(SessionBusy):
        await store.delete_session("alice", sid)
    with pytest.raises(SessionBusy, match="nothing was deleted"):
        await store.delete_user_sessions("alice")
    rows = await store.append_messages("alice", sid, [msg("mine")], lease=Lease(sid, "one", 30))
    assert rows[0].seq == 1
    with pytest.raises(SessionBusy, match="expired"):
        await store.append_messages("alice", sid, [msg("forged")], lease=Lease(sid, "two", 30))
    assert await store.renew_session_lock(sid, "one", 30)
    assert not await store.renew_session_lock(sid, "two", 30)
    await store.release_session_lock(sid, "two")  # not the holder: no effect
    assert not await store.acquire_session_lock("alice", sid, "two", 30)
    await store.release_session_lock(sid, "one")
    assert await store.acquire_session_lock("alice", sid, "two", 30)


async def test_an_expired_lock_is_taken_over_and_its_old_lease_refused(store: Store):
    sid = await new_session(store)
    # A holder that died without releasing: its expiry (now + 1 ns) has passed by the next call.
    assert await store.acquire_session_lock("alice", sid, "dead-holder", 1e-9)
    assert await store.acquire_session_lock("alice", sid, "new-holder", 30)
    assert not await store.renew_session_lock(sid, "dead-holder", 30)
    with pytest.raises(SessionBusy):
        await store.append_messages("alice", sid, [msg("late")], lease=Lease(sid, "dead-holder", 30))


async def test_a_lease_for_another_session_is_rejected(store: Store):
    a, b = await new_session(store), await new_session(store)
    assert await store.acquire_session_lock("alice", a, "me", 30)
    with pytest.raises(InvalidInput, match=f"lease passed is for session '{a}'"):
        await store.append_messages("alice", b, [msg("x")], lease=Lease(a, "me", 30))


async def test_concurrent_appends_from_many_tasks_are_all_kept_in_order(store: Store):
    sid = await new_session(store)

    async def writer(w: int) -> None:
        for i in range(10):
            await store.append_messages("alice", sid, [msg(f"{w}:{i}")])

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            for w in range(20):
                tg.start_soon(writer, w)
    rows = await store.list_messages("alice", sid, limit=500)
    assert [r.seq for r in rows] == list(range(1, 201))
    for w in range(20):
        assert [int(r.content.split(":")[1]) for r in rows if r.content.startswith(f"{w}:")] == list(range(10))


async def test_tokens_are_found_by_hash_until_revoked(store: Store):
    now = utcnow()
    await store.add_token(TokenRecord("tok_a", "hash-a", "alice", "admin", "laptop", now))
    await store.add_token(TokenRecord("tok_b", "hash-b", "bob", "user", "", now))
    assert (await store.find_token("hash-a")).user_id == "alice"  # type: ignore[union-attr]
    assert await store.find_token("nope") is None
    assert [t.id for t in await store.list_tokens("bob")] == ["tok_b"]
    assert {t.id for t in await store.list_tokens()} == {"tok_a", "tok_b"}
    assert await store.revoke_token("tok_a", at=now)
    assert not await store.revoke_token("tok_a", at=now)
    assert await store.find_token("hash-a") is None
    assert (await store.list_tokens("alice"))[0].revoked_at is not None


async def test_logins_are_found_by_the_hash_of_their_id_touched_deleted_and_pruned_when_idle_or_old(store: Store):
    now = utcnow()
    hour = timedelta(hours=1)
    await store.add_login(LoginRecord("id-a", "token-a", "alice", now - 2 * hour, now - 2 * hour))
    await store.add_login(LoginRecord("id-b", "token-b", "bob", now - 30 * hour, now))
    await store.add_login(LoginRecord("id-c", "token-c", "carol", now, now))
    found = await store.find_login("id-a")
    assert found is not None and (found.token_hash, found.user_id) == ("token-a", "alice")
    assert abs((found.seen_at - (now - 2 * hour)).total_seconds()) < 0.01
    await store.touch_login("id-a", at=now)
    assert abs((await store.find_login("id-a")).seen_at - now).total_seconds() < 0.01  # type: ignore[union-attr]
    assert await store.find_login("nope") is None
    assert await store.delete_login("id-c") and not await store.delete_login("id-c")
    assert await store.find_login("id-c") is None
    # idle for an hour (none now: id-a was just touched) or opened over a day ago (id-b)
    assert await store.prune_logins(seen_before=now - hour, created_before=now - 24 * hour) == 1
    assert await store.find_login("id-b") is None and await store.find_login("id-a") is not None


async def test_audit_rows_filter_by_user_tool_and_time_and_prune_by_age(store: Store):
    now = utcnow()
    old = now - timedelta(days=40)
    for at, user, tool in ((old, "alice", "a_x"), (now, "alice", "a_y"), (now, "bob", "a_x")):
        await store.add_audit(AuditRecord(at, user, tool, "ok", 1.5, server="a", arguments={"q": "1"}))
    assert len(await store.query_audit()) == 3
    assert [r.tool for r in await store.query_audit(user_id="alice")] == ["a_y", "a_x"]  # newest first
    assert [r.user_id for r in await store.query_audit(tool="a_x")] == ["bob", "alice"]
    assert [r.tool for r in await store.query_audit(user_id="alice", since=now - timedelta(days=1))] == ["a_y"]
    row = (await store.query_audit(user_id="bob"))[0]
    assert (row.arguments, row.server, row.duration_ms, row.outcome) == ({"q": "1"}, "a", 1.5, "ok")
    assert await store.prune_audit(now - timedelta(days=30)) == 1
    assert len(await store.query_audit()) == 2


async def test_audit_days_counts_each_users_tools_by_distinct_days_of_successful_calls(store: Store):
    midnight = utcnow().replace(hour=12, minute=0, second=0, microsecond=0)
    rows = [(d, "alice", "cal_list", "ok") for d in range(6)] + [(0, "alice", "cal_list", "ok")]
    rows += [(d, "alice", "notes_add", "ok") for d in range(5)] + [(d, "alice", "web_get", "error") for d in range(7)]
    rows += [(d, "alice", "rare", "ok") for d in (0, 3)] + [(9, "alice", "old", "ok")] * 8
    rows += [(d, "bob", "cal_list", "ok") for d in range(5)]
    for day, user, tool, outcome in rows:
        await store.add_audit(AuditRecord(midnight - timedelta(days=day), user, tool, outcome, 1.0))
    since = midnight - timedelta(days=7)
    got = await store.audit_days(since, 5, 100)
    # by user, most days first; errors, rare tools and calls before ``since`` do not count
    assert got == [("alice", "cal_list", 6, 7), ("alice", "notes_add", 5, 5), ("bob", "cal_list", 5, 5)]
    assert await store.audit_days(since, 5, 1) == [("alice", "cal_list", 6, 7)]  # bounded
    assert [r[1] for r in await store.audit_days(since, 2, 100) if r[0] == "alice"] == ["cal_list", "notes_add", "rare"]


async def test_an_import_creates_the_session_and_its_messages_at_their_own_times(store: Store):
    may = utcnow().replace(year=2023, month=5, day=7)
    rows = await store.import_session(SessionRecord("ses_imp", "alice", "old chat", may - timedelta(hours=1), may),
                                      [NewMessage("msg_i1", "user", "早上好", may - timedelta(hours=1)),
                                       NewMessage("msg_i2", "assistant", "later first", may),
                                       NewMessage("msg_i3", "user", "said earlier", may - timedelta(minutes=30))])
    assert [r.seq for r in rows] == [1, 2, 3]
    page = await store.list_messages("alice", "ses_imp", limit=10)
    assert [(m.seq, m.content, m.created_at) for m in page] == [
        (1, "早上好", may - timedelta(hours=1)), (2, "later first", may), (3, "said earlier", may - timedelta(minutes=30))]
    got = await store.get_session("alice", "ses_imp")
    assert (got.created_at, got.updated_at, got.message_count) == (may - timedelta(hours=1), may, 3)
    with pytest.raises(NotFound):
        await store.get_session("bob", "ses_imp")


async def test_an_import_that_fails_part_way_leaves_no_session_and_no_message(store: Store):
    at = utcnow()
    clash = [NewMessage("msg_same", "user", "one", at), NewMessage("msg_same", "user", "two", at)]
    with pytest.raises(Exception):  # noqa: B017 - a duplicate id is a bug in the caller; any backend error will do
        await store.import_session(SessionRecord("ses_half", "alice", "t", at, at), clash)
    with pytest.raises(NotFound):
        await store.get_session("alice", "ses_half")
    assert await store.search_messages("alice", "one", limit=5) == []


async def test_appending_an_older_message_never_moves_the_session_back_in_time(store: Store):
    sid = await new_session(store)
    before = (await store.get_session("alice", sid)).updated_at
    old = NewMessage("msg_" + secrets.token_urlsafe(8), "user", "from last year", before - timedelta(days=365))
    rows = await store.append_messages("alice", sid, [msg("now"), old])
    assert [r.seq for r in rows] == [1, 2] and rows[1].created_at == before - timedelta(days=365)
    assert (await store.get_session("alice", sid)).updated_at >= before


async def test_a_summary_request_is_claimed_once_and_folds_exactly_what_was_claimed(store: Store):
    sid = await new_session(store)
    await store.append_messages("alice", sid, [msg(f"m{i}") for i in range(6)])
    assert not await store.request_summary("bob", sid, 4)  # not bob's session: nothing is queued
    assert not await store.request_summary("alice", sid, 4, min_new=5)  # too little to fold yet
    assert await store.request_summary("alice", sid, 4)
    job = await store.claim_summary("w1", lease=30)
    assert (job.session_id, job.user_id, job.upto_seq, job.summary_upto, job.summary) == (sid, "alice", 4, 0, "")
    assert await store.claim_summary("w2", lease=30) is None  # held: a second worker gets nothing
    assert await store.request_summary("alice", sid, 5)  # more asked while the first fold runs
    assert not await store.finish_summary(sid, "w2", "not mine")
    assert await store.finish_summary(sid, "w1", "Summary up to 4")
    got = await store.get_session("alice", sid)
    assert got.summary == "Summary up to 4"
    again = await store.claim_summary("w2", lease=30)  # the job re-opened for what was asked meanwhile
    assert (again.upto_seq, again.summary_upto, again.summary) == (5, 4, "Summary up to 4")
    assert await store.finish_summary(sid, "w2", "Summary up to 5")
    assert await store.claim_summary("w3", lease=30) is None
    assert not await store.request_summary("alice", sid, 5)  # already covered
    assert (await store.summary_counts()).get("done") == 1


async def test_a_summary_job_whose_holder_died_is_taken_over_and_the_old_holder_writes_nothing(store: Store):
    sid = await new_session(store)
    await store.append_messages("alice", sid, [msg("a"), msg("b")])
    await store.request_summary("alice", sid, 2)
    assert await store.claim_summary("dead", lease=0.01)
    job = await until(lambda: store.claim_summary("alive", lease=30), timeout=5, every=0.02)  # the lease runs out
    assert job.attempts == 2
    assert not await store.renew_summary(sid, "dead", lease=30)
    assert not await store.finish_summary(sid, "dead", "stale")
    await store.fail_summary(sid, "alive", "model down", retry_in=0)
    job = await store.claim_summary("alive", lease=30)
    assert job is not None and job.attempts == 3
    await store.fail_summary(sid, "alive", "model down for good", retry_in=None)
    assert await store.claim_summary("alive", lease=30) is None
    assert (await store.get_session("alice", sid)).summary == ""
    assert (await store.summary_counts()).get("failed") == 1


async def test_a_claimed_index_batch_finished_by_its_owner_moves_the_mark_past_it(store: Store):
    sid = await new_session(store)
    await store.append_messages("alice", sid, [msg(f"note {i}") for i in range(5)])
    batch = await store.unindexed_messages("terms_test", 3, owner="indexer-a", lease=30)
    assert [content for _, _, content, _ in batch] == ["note 0", "note 1", "note 2"]
    assert await store.renew_index_claim("terms_test", "indexer-a", lease=30)
    assert await store.index_message_terms([(pk, c, p) for pk, _, c, p in batch], mark="terms_test",
                                           last_pk=batch[-1][0], owner="indexer-a")
    rest = await store.unindexed_messages("terms_test", 10, owner="indexer-a", lease=30)
    assert await store.index_mark("terms_test") == batch[-1][0]
    assert [content for _, _, content, _ in rest] == ["note 3", "note 4"]
    assert await store.pending_index("messages", "terms_test") == 2


async def test_memory_counts_are_one_users_or_with_no_user_everyones(store: Store):
    now = utcnow()
    for mid, user in (("m1", "alice"), ("m2", "alice"), ("m3", "bob")):
        await store.add_memory(MemoryRecord(mid, user, f"fact {mid}", "fact", 0.9, {}, now),
                               MemoryEvent(mid, user, now, "added", "test"), key=mid)
    assert await store.count_memories("bob") == {"active": 1}  # what a user's status shows
    assert await store.count_memories("carol") == {}
    assert await store.count_memories() == {"active": 3}  # an admin's
