"""What only a shared PostgreSQL has to get right: replicas starting at once, a replica killed while
holding a lock or mid-burst, two replicas claiming work, the server restarting under a running store,
and recall's indexes (tsvector over words and CJK bigrams, pgvector HNSW filtered by user)."""

from __future__ import annotations

import signal
import sys
import time

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_hub.infra.errors import SessionBusy, StorageError
from hermes_hub.infra.storage import Store, open_store
from hermes_hub.infra.storage.postgres.schema import MIGRATIONS
from hermes_hub.infra.storage.records import AuditRecord, MemoryEvent, MemoryRecord, NewMessage, SessionRecord, utcnow
from hermes_hub.infra.storage.terms import index_text, match_query
from tests.postgres import new_database, start, stop
from tests.storage.commit_cutter import CommitCutter
from tests.support import PROJECT, until


@pytest.fixture
async def pg_url(pg_server) -> str:
    return await new_database(pg_server)


async def session(store: Store, user: str = "alice") -> str:
    now = utcnow()
    sid = f"ses_{time.monotonic_ns()}"
    await store.create_session(SessionRecord(sid, user, "t", now, now))
    return sid


async def test_replicas_opening_a_new_database_at_once_migrate_it_exactly_once(pg_url: str):
    applied: list[list[str]] = []

    async def replica() -> None:
        async with open_store(pg_url) as store:
            applied.append(store.migrations_applied)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(replica)
        async with open_store(pg_url) as store:
            recorded = await store.raw("SELECT version, name FROM schema_migrations ORDER BY version")
    names = [m.__name__ for m in MIGRATIONS]
    assert sorted(applied) == [[], [], names]
    assert recorded == list(enumerate(names, start=1))


@pytest.mark.slow
async def test_a_lock_held_by_a_killed_replica_is_busy_at_once_then_free_after_its_lease(pg_url: str):
    ttl = 2.0
    async with open_store(pg_url) as store:
        sid = await session(store)
        argv = [sys.executable, "-m", "tests.storage.lock_holder", pg_url, "alice", sid, str(ttl)]
        async with await anyio.open_process(argv, cwd=PROJECT) as holder:
            assert holder.stdout is not None
            with anyio.fail_after(20):
                assert await BufferedByteReceiveStream(holder.stdout).receive_until(b"\n", 100) == b"held"
            holder.send_signal(signal.SIGKILL)
            await holder.wait()
        killed = time.monotonic()
        with anyio.fail_after(1):  # answered at once, not queued
            with pytest.raises(SessionBusy):
                async with store.session_lock("alice", sid):
                    pass
        await until(lambda: store.acquire_session_lock("alice", sid, "next-writer", 30), timeout=ttl + 5)
    assert time.monotonic() - killed < ttl + 5


async def test_two_claimers_never_get_the_same_extraction_job(pg_url: str):
    async with open_store(pg_url) as one, open_store(pg_url) as two:
        for _ in range(30):
            sid = await session(one)
            await one.append_messages("alice", sid, [NewMessage(f"m{time.monotonic_ns()}", "user", "hi", utcnow())])
        assert await one.schedule_extraction() == 30
        claimed: dict[str, list[int]] = {"one": [], "two": []}

        async def claimer(name: str, store: Store) -> None:
            while (job := await store.claim_extraction(name, lease=60)) is not None:
                claimed[name].append(job.id)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for name, store in (("one", one), ("two", two)) * 3:
                    tg.start_soon(claimer, name, store)
    every = claimed["one"] + claimed["two"]
    assert len(every) == len(set(every)) == 30
    assert claimed["one"] and claimed["two"]


async def test_every_acknowledged_append_survives_a_replica_killed_mid_burst(pg_url: str):
    acked: list[str] = []
    argv = [sys.executable, "-m", "tests.storage.appender", pg_url]
    async with await anyio.open_process(argv, cwd=PROJECT) as proc:
        assert proc.stdout is not None
        out = BufferedByteReceiveStream(proc.stdout)
        try:
            with anyio.fail_after(30):
                session_line = (await out.receive_until(b"\n", 1000)).decode()
                while len(acked) < 200:
                    acked.append((await out.receive_until(b"\n", 1000)).decode().split()[1])
            proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(10):
                while True:
                    try:
                        acked.append((await out.receive_until(b"\n", 1000)).decode().split()[1])
                    except (anyio.EndOfStream, anyio.IncompleteRead):
                        break
                await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
    async with open_store(pg_url) as store:
        sid = session_line.split()[1]
        stored = {r[0] for r in await store.raw("SELECT id FROM messages WHERE session_id = $1", [sid])}
        seqs = [r[0] for r in await store.raw("SELECT seq FROM messages WHERE session_id = $1 ORDER BY seq", [sid])]
    assert set(acked) <= stored and len(stored) - len(acked) <= 1
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.parametrize("cut", ["after", "before"])
async def test_a_write_whose_commit_answer_is_lost_is_applied_exactly_once_and_answered(pg_url: str, cut: str):
    """The link is cut at COMMIT, after the server applied it or before it saw it: the retry applies
    the write once in both cases and answers with what was stored."""
    async with CommitCutter(pg_url) as proxy, open_store(proxy.url) as store:
        sid = await session(store)
        with anyio.fail_after(20):
            proxy.arm(cut)
            appended = await store.append_messages("alice", sid, [NewMessage("m1", "user", "hi", utcnow())])
            proxy.arm(cut)
            audit_id = await store.add_audit(AuditRecord(utcnow(), "alice", "echo", "ok", 1.0, arguments={"x": 1}))
        messages = await store.raw("SELECT id, seq FROM messages WHERE session_id = $1", [sid])
        audits = await store.raw("SELECT id FROM audit")
        count = (await store.get_session("alice", sid)).message_count
    assert proxy.cuts == 2
    assert [m.seq for m in appended] == [1] and messages == [("m1", 1)] and count == 1
    assert audits == [(audit_id,)]


async def test_a_write_whose_outcome_cannot_be_learned_says_so(pg_url: str):
    async with CommitCutter(pg_url) as proxy:
        async with open_store(proxy.url) as store:
            sid = await session(store)
            proxy.arm("after")
            proxy.refuse_new()  # the retry cannot reach the server to look the write up
            with anyio.fail_after(20):
                with pytest.raises(StorageError, match="COMMIT was sent but never confirmed, so it may have been "
                                                       "applied: read the data back"):
                    await store.append_messages("alice", sid, [NewMessage("m1", "user", "hi", utcnow())])
    async with open_store(pg_url) as store:
        assert await store.raw("SELECT id FROM messages WHERE session_id = $1", [sid]) == [("m1",)]


async def test_calls_fail_clearly_while_the_server_is_down_and_work_again_after():
    import pgserver

    server = start()
    try:
        async with open_store(server.get_uri()) as store:
            sid = await session(store)
            pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
            with anyio.fail_after(15):
                with pytest.raises(StorageError, match="is unavailable.*work again once it is back"):
                    await store.get_session("alice", sid)
            await anyio.to_thread.run_sync(server.ensure_postgres_running)
            with anyio.fail_after(15):
                assert (await store.get_session("alice", sid)).id == sid
    finally:
        stop(server)


def memory(mid: str, user: str, text: str) -> tuple[MemoryRecord, MemoryEvent]:
    now = utcnow()
    return MemoryRecord(mid, user, text, "fact", 0.9, {}, now), MemoryEvent(mid, user, now, "added", "test")


async def test_lexical_recall_ranks_english_stems_and_chinese_bigrams_within_the_user(pg_url: str):
    async with open_store(pg_url) as store:
        for mid, user, text in (("m1", "alice", "I moved to Oslo last spring"), ("m2", "alice", "我们明天去北京开会"),
                                ("m3", "alice", "The budget meeting is on Friday"), ("m4", "bob", "I moved to Rome")):
            record, event = memory(mid, user, text)
            await store.add_memory(record, event, key=index_text(text))
        moving = await store.lexical_search("memories", "alice", match_query("where did I move?") or "", 10)
        beijing = await store.lexical_search("memories", "alice", match_query("去北京做什么") or "", 10)
        by_pk = await store.memories_by_pk("alice", [r.pk for r in moving + beijing])
    assert [by_pk[r.pk].id for r in moving] == ["m1"]  # "move" matches "moved"; bob's is not alice's
    assert [by_pk[r.pk].id for r in beijing] == ["m2"]


async def test_vector_search_uses_hnsw_and_returns_only_the_callers_nearest(pg_url: str):
    rows = [("alice", [1.0, 0, 0]), ("alice", [0.9, 0.1, 0]), ("alice", [0, 0, 1.0]), ("bob", [1.0, 0, 0])]
    async with open_store(pg_url) as store:
        pks = []
        for i, (user, _) in enumerate(rows):
            record, event = memory(f"m{i}", user, f"text {i}")
            await store.add_memory(record, event, key=f"k{i}")
            pks.append((await store.list_memories(user, limit=1))[0][0])
        table = await store.ensure_vector_table("memories", "test", 3)
        await store.add_vectors(table, [(pk, user, vec) for pk, (user, vec) in zip(pks, rows, strict=True)],
                                mark=table, last_pk=max(pks))
        near = await store.nearest(table, "alice", [1, 0, 0], 2)
        indexes = [r[0] for r in await store.raw("SELECT indexdef FROM pg_indexes WHERE tablename = $1", [table])]
    assert [r.pk for r in near] == pks[:2] and near[0].score == pytest.approx(0, abs=1e-6)
    assert any("hnsw" in d and "vector_cosine_ops" in d for d in indexes)


async def test_a_statement_past_the_timeout_is_cancelled_with_a_clear_error(pg_url: str):
    async with open_store(pg_url + "&statement_timeout=0.2&pool_size=2") as store:  # a socket URL: ?host=/dir
        with anyio.fail_after(10):
            with pytest.raises(StorageError, match=r"took longer than 0.2 s and was cancelled.*statement_timeout="):
                await store.raw("SELECT pg_sleep(2)")
            assert await store.raw("SELECT 1") == [(1,)]  # the connection is still good


async def test_bad_postgresql_urls_say_what_to_fix():
    with pytest.raises(StorageError, match=r"pool_size='many' is not a number; write e.g. \?pool_size=10"):
        async with open_store("postgresql://hub:secret@localhost/hub?pool_size=many"):
            pass
    with pytest.raises(StorageError, match=r"cannot connect to PostgreSQL at postgresql://hub:\*\*\*@127.0.0.1:1/hub"):
        async with open_store("postgresql://hub:secret@127.0.0.1:1/hub"):
            pass
