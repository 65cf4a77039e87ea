"""What only the SQLite backend must prove: WAL, sqlite-vec, migrations, URLs, crash safety, plans."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_hub.infra.errors import SessionBusy, StorageError
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import default_url, open_store, sqlite_path
from hermes_hub.infra.storage.sqlite.migrations import MIGRATIONS
from hermes_hub.infra.storage.sqlite import SQLiteStore

PROJECT = Path(__file__).resolve().parents[2]


def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'hub.db'}"


async def test_the_database_is_in_wal_mode_with_foreign_keys_on(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        assert await store.raw("PRAGMA journal_mode") == [("wal",)]
        assert await store.raw("PRAGMA foreign_keys") == [(1,)]
        assert await store.raw("PRAGMA synchronous", write=True) == [(1,)]  # NORMAL, on the writer
    async with open_store(url(tmp_path) + "?synchronous=full") as store:
        assert await store.raw("PRAGMA synchronous", write=True) == [(2,)]


async def test_sqlite_vec_loads_through_the_stores_own_connections(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        assert (await store.raw("SELECT vec_version()"))[0][0].startswith("v0.1.")
        await store.raw("CREATE VIRTUAL TABLE probe USING vec0 (embedding float[3])", write=True)
        await store.raw("INSERT INTO probe (rowid, embedding) VALUES (1, '[1, 0, 0]'), (2, '[0, 1, 0]'), "
                        "(3, '[0, 0, 1]')", write=True)
        nearest = await store.raw("SELECT rowid, distance FROM probe WHERE embedding MATCH ? AND k = 2 "
                                  "ORDER BY distance", ["[0.1, 0.9, 0.0]"])
        assert [rowid for rowid, _ in nearest] == [2, 1]


async def test_readers_cannot_write(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        with pytest.raises(Exception, match="readonly|read-only|query_only"):
            await store.raw("DELETE FROM sessions")


async def test_migrations_are_recorded_once_and_reopening_applies_none(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        assert isinstance(store, SQLiteStore)
        assert store.migrations_applied == [m.__name__ for m in MIGRATIONS]
        recorded = await store.raw("SELECT version, name FROM schema_migrations ORDER BY version")
        assert recorded == [(i, m.__name__) for i, m in enumerate(MIGRATIONS, start=1)]
        await Sessions(store).create("alice")
    async with open_store(url(tmp_path)) as store:
        assert store.migrations_applied == []
        assert await store.raw("SELECT count(*) FROM schema_migrations") == [(len(MIGRATIONS),)]
        assert len((await Sessions(store).list("alice")).sessions) == 1


async def test_a_database_from_a_newer_hub_is_refused_with_the_fix(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        await store.raw("INSERT INTO schema_migrations VALUES (999, 'm999_future', 0)", write=True)
    with pytest.raises(StorageError, match="schema version 999 but this hermes-hub knows only .*Upgrade hermes-hub"):
        async with open_store(url(tmp_path)):
            pass


async def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path: Path):
    (tmp_path / "hub.db").write_text("not a database, just text " * 100)
    with pytest.raises(StorageError, match=r"cannot open the SQLite database .*hub.db.*Check storage.url"):
        async with open_store(url(tmp_path)):
            pass


def test_storage_urls_name_a_file_or_say_what_to_write(tmp_path: Path):
    assert sqlite_path("sqlite:///rel/hub.db", tmp_path) == (tmp_path / "rel/hub.db", {})
    assert sqlite_path("sqlite:////abs/hub.db") == (Path("/abs/hub.db"), {})
    assert sqlite_path("sqlite:///~/hub.db")[0] == Path.home() / "hub.db"
    assert sqlite_path("sqlite:///x.db?synchronous=full", tmp_path)[1] == {"synchronous": "full"}
    with pytest.raises(StorageError, match="names a PostgreSQL database, not an SQLite file"):
        sqlite_path("postgresql://hub:pw@db/hub")
    with pytest.raises(StorageError, match=r"unsupported scheme 'mysql'; use 'sqlite:///path/to/hub.db'"):
        sqlite_path("mysql://db/hub")
    with pytest.raises(StorageError, match="names no file"):
        sqlite_path("sqlite://")
    with pytest.raises(StorageError, match="unknown option.*journal"):
        sqlite_path("sqlite:///x.db?journal=off")


def test_the_default_database_lives_in_the_data_dir(tmp_path: Path):
    assert default_url({"HERMES_DATA_DIR": str(tmp_path)}) == f"sqlite:///{tmp_path}/hub.db"
    assert default_url({"XDG_DATA_HOME": "/x"}) == "sqlite:////x/hermes-hub/hub.db"
    assert default_url({}).endswith("/.local/share/hermes-hub/hub.db")


async def test_opening_creates_missing_parent_folders(tmp_path: Path):
    async with open_store(f"sqlite:///{tmp_path}/a/b/c/hub.db"):
        pass
    assert (tmp_path / "a/b/c/hub.db").is_file()


async def test_history_and_search_queries_use_their_indexes(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        plan = " ".join(r[-1] for r in await store.raw(
            "EXPLAIN QUERY PLAN SELECT * FROM messages m WHERE m.session_id = ? AND m.user_id = ? AND m.seq > ? "
            "ORDER BY m.seq LIMIT 51", ["s", "u", 0]))
        assert "USING INDEX sqlite_autoindex_messages_2 (session_id=? AND seq>?)" in plan and "TEMP B-TREE" not in plan
        plan = " ".join(r[-1] for r in await store.raw(
            "EXPLAIN QUERY PLAN SELECT m.id FROM messages_fts f JOIN messages m ON m.pk = f.rowid "
            "WHERE messages_fts MATCH ? AND m.user_id = ?", ['"北京开"', "u"]))
        assert "VIRTUAL TABLE INDEX" in plan and "m USING INTEGER PRIMARY KEY" in plan


async def test_two_stores_on_one_file_share_the_session_lock_like_two_processes(tmp_path: Path):
    async with open_store(url(tmp_path)) as one, open_store(url(tmp_path)) as two:
        s = await Sessions(one).create("alice")
        with anyio.fail_after(5):
            async with Sessions(one).lock("alice", s.session_id):
                with pytest.raises(SessionBusy):
                    async with Sessions(two).lock("alice", s.session_id):
                        pass
            async with Sessions(two).lock("alice", s.session_id):
                pass


async def test_every_acknowledged_append_survives_a_kill_9_mid_burst(tmp_path: Path):
    db = url(tmp_path)
    acked: list[str] = []
    async with await anyio.open_process([sys.executable, "-m", "tests.storage.appender", db], cwd=PROJECT) as proc:
        assert proc.stdout is not None
        out = BufferedByteReceiveStream(proc.stdout)
        try:
            with anyio.fail_after(20):
                session_line = (await out.receive_until(b"\n", 1000)).decode()
                assert session_line.startswith("session ")
                while len(acked) < 300:
                    acked.append((await out.receive_until(b"\n", 1000)).decode().split()[1])
            proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(10):  # printed before the kill but not read yet: acknowledged too
                while True:
                    try:
                        line = (await out.receive_until(b"\n", 1000)).decode()
                    except (anyio.EndOfStream, anyio.IncompleteRead):
                        break
                    acked.append(line.split()[1])
                assert await proc.wait() == -signal.SIGKILL
        finally:
            if proc.returncode is None:
                proc.kill()
    async with open_store(db) as store:
        assert await store.raw("PRAGMA integrity_check") == [("ok",)]
        sid = session_line.split()[1]
        stored = {r[0] for r in await store.raw("SELECT id FROM messages WHERE session_id = ?", [sid])}
        assert set(acked) <= stored and len(stored) - len(acked) <= 1  # at most the one in flight
        seqs = [r[0] for r in await store.raw("SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", [sid])]
        assert seqs == list(range(1, len(seqs) + 1))


async def test_a_long_write_runs_off_the_event_loop(tmp_path: Path):
    async with open_store(url(tmp_path)) as store:
        sessions = Sessions(store)
        s = await sessions.create("alice")
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await anyio.sleep(0.005)
                ticks += 1

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ticker)
                await sessions.append_many("alice", s.session_id,
                                           [{"role": "user", "content": f"{i} 北京 " * 200} for i in range(1000)])
                tg.cancel_scope.cancel()
        assert ticks >= 5  # a blocked loop would not have ticked at all during the write


async def test_a_database_written_before_memory_keeps_its_messages_and_search_when_migrated(tmp_path: Path):
    import sqlean

    from hermes_hub.infra.storage.sqlite import migrations

    path = tmp_path / "hub.db"
    db = sqlean.connect(str(path), isolation_level=None)
    migrations.apply(db, MIGRATIONS[:6])  # the schema hermes-hub had before long-term memory
    db.execute("INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES ('s1', 'alice', 't', 0, 0)")
    for seq, text in enumerate(["我们明天去北京开会", "bring the budget sheet"], start=1):
        db.execute("INSERT INTO messages (id, session_id, user_id, seq, role, content, created_at) "
                   "VALUES (?, 's1', 'alice', ?, 'user', ?, 0)", (f"m{seq}", seq, text))
    db.close()
    async with open_store(f"sqlite:///{path}") as store:
        assert store.migrations_applied == [m.__name__ for m in MIGRATIONS[6:]]  # m007_memory onwards
        hits = await Sessions(store).search("alice", "北京")
        await store.raw("DELETE FROM messages WHERE id = 'm2'", write=True)
        after = await Sessions(store).append("alice", "s1", role="user", content="a new one")
        pks = await store.raw("SELECT id, pk FROM messages ORDER BY pk")
    assert [h.message_id for h in hits] == ["m1"]
    assert pks == [("m1", 1), (after.message_id, 3)]  # the deleted last key 2 is not given out again
