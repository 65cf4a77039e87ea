"""``hermes-hub storage migrate`` copies a whole store between SQLite and PostgreSQL, either way, with
vectors, terms and keys; it refuses a target holding data unless ``--force`` and checks every count."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio

from hermes_hub.infra.storage import Store, open_store
from hermes_hub.infra.storage.documents import ChunkRow, DocumentRecord
from hermes_hub.infra.storage.records import (
    AuditRecord,
    MemoryEvent,
    MemoryRecord,
    NewMessage,
    RunRecord,
    SealedRecord,
    SessionRecord,
    TokenRecord,
    utcnow,
)
from hermes_hub.infra.storage.terms import index_text, match_query
from tests.postgres import new_database
from tests.support import PROJECT

VECTORS = {"alice": [1.0, 0.0, 0.0], "bob": [0.0, 1.0, 0.0]}


async def fill(store: Store) -> str:
    """A little of everything the hub keeps; returns the vector table's name."""
    now = utcnow()
    for user in ("alice", "bob"):
        await store.create_session(SessionRecord(f"ses_{user}", user, "trip", now, now))
        await store.append_messages(user, f"ses_{user}", [
            NewMessage(f"msg_{user}_1", "user", "我们明天去北京开会", now),
            NewMessage(f"msg_{user}_2", "assistant", "The budget review moved to Friday", now,
                       tool_calls=[{"id": "c1", "name": "x", "arguments": {}}], metadata={"k": 1})])
        text = f"{user} keeps the bike at the north station"
        source = {"type": "explicit", "message_ids": [f"msg_{user}_1"]}  # provenance: a link to copy
        await store.add_memory(MemoryRecord(f"mem_{user}", user, text, "fact", 0.9, source, now),
                               MemoryEvent(f"mem_{user}", user, now, "added", "test"), key=text)
    rows = [(pk, uid, content) for pk, uid, content in await store.unindexed("messages", "terms", 100)]
    await store.index_message_terms([(pk, index_text(c), "") for pk, _, c in rows], mark="terms",
                                    last_pk=max(pk for pk, _, _ in rows))
    table = await store.ensure_vector_table("memories", "test", 3)
    mems = {r.user_id: pk for user in VECTORS for pk, r in await store.list_memories(user)}
    await store.add_vectors(table, [(mems[u], u, v) for u, v in VECTORS.items()], mark=table, last_pk=max(mems.values()))
    await store.set_working("alice", "ses_alice", "- no coffee")
    await store.add_document(DocumentRecord("doc_a", "alice", False, "Backups", "text", "markdown", 40, 1, now,
                                            "# Restore\nThe nightly backup runs at two."),
                             [ChunkRow(0, ("Restore",), "The nightly backup runs at two.")])
    ((chunk_pk, _),) = await store.unembedded_chunks("test", 10)
    await store.set_chunk_vectors("test", [(chunk_pk, b"\x00\x00\x80?")])
    await store.add_token(TokenRecord("tok_a", "hash-a", "alice", "admin", "laptop", now))
    await store.put_sealed(SealedRecord("alice", "oauth", "notion", "key1", b"\x00sealed\xff", now))
    await store.add_audit(AuditRecord(now, "alice", "hermes_session_create", "ok", 1.5, arguments={"q": "北京"}))
    await store.schedule_extraction()
    assert await store.request_summary("alice", "ses_alice", 2)
    await store.add_run(RunRecord("run_1", "alice", "ses_alice", "default", "plan", now, now, "done", 1, 10, 5,
                                  "ok", [{"type": "round"}]))
    return table


async def looks_copied(store: Store, table: str) -> None:
    (hit,) = await store.search_messages("alice", "北京", limit=5)
    assert hit.message.id == "msg_alice_1" and hit.session_title == "trip"
    page = await store.list_messages("bob", "ses_bob", limit=5)
    assert [m.seq for m in page] == [1, 2] and page[1].tool_calls[0]["name"] == "x" and page[1].metadata == {"k": 1}
    lexical = await store.lexical_search("messages", "alice", match_query("budget friday") or "", 5)
    memory = await store.lexical_search("memories", "bob", match_query("where is the bike?") or "", 5)
    assert len(lexical) == 1 and len(memory) == 1
    assert (await store.memories_by_pk("bob", [memory[0].pk]))[memory[0].pk].id == "mem_bob"
    (near,) = await store.nearest(table, "bob", [0.0, 1.0, 0.0], 5)
    assert near.pk == memory[0].pk and abs(near.score) < 1e-6
    assert await store.memories_only_from_session("alice", "ses_alice") == ["mem_alice"]
    assert (await store.get_working("alice", "ses_alice"))[0] == "- no coffee"
    (chunk,) = await store.chunk_lexical("alice", match_query("when does the backup run?") or "", 5)
    assert (await store.chunks_by_pk("alice", [chunk.pk]))[chunk.pk].heading == ("Restore",)
    assert await store.chunk_lexical("bob", match_query("backup") or "", 5) == []  # still alice's alone
    assert await store.chunk_vectors("alice", "test", 0) == [(chunk.pk, b"\x00\x00\x80?")]
    assert (await store.get_document("alice", "doc_a")).text.startswith("# Restore")
    assert (await store.find_token("hash-a")).user_id == "alice"  # type: ignore[union-attr]
    assert (await store.get_sealed("alice", "oauth", "notion")).sealed == b"\x00sealed\xff"  # type: ignore[union-attr]
    assert (await store.query_audit())[0].arguments == {"q": "北京"}
    assert (await store.get_run("alice", "run_1")).trace == [{"type": "round"}]
    assert (await store.extraction_counts()).get("pending") == 2
    assert (await store.claim_summary("w", lease=30)).upto_seq == 2  # type: ignore[union-attr]
    await store.fail_summary("ses_alice", "w", "not now", retry_in=0)
    # new rows continue after the copied keys
    added = await store.append_messages("alice", "ses_alice", [NewMessage(f"msg_{time.monotonic_ns()}", "user",
                                                                          "after the move", utcnow())])
    assert added[0].seq == len(await store.list_messages("alice", "ses_alice", limit=10))


def migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", "storage", "migrate", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)


async def test_a_store_moves_to_postgresql_and_back_with_everything_and_checked_counts(pg_server, tmp_path: Path):
    sqlite_url, pg_url = f"sqlite:///{tmp_path}/hub.db", await new_database(pg_server)
    async with open_store(sqlite_url) as store:
        table = await fill(store)
    with anyio.fail_after(300):
        there = await anyio.to_thread.run_sync(migrate, "--from", sqlite_url, "--to", pg_url)
        assert there.returncode == 0, there.stderr
        refused = await anyio.to_thread.run_sync(migrate, "--from", sqlite_url, "--to", pg_url)
        forced = await anyio.to_thread.run_sync(migrate, "--from", sqlite_url, "--to", pg_url, "--force")
        async with open_store(pg_url) as pg:
            await looks_copied(pg, table)
        back = await anyio.to_thread.run_sync(migrate, "--from", pg_url, "--to", f"sqlite:///{tmp_path}/backup.db")
        async with open_store(f"sqlite:///{tmp_path}/backup.db") as backup:
            assert len(await backup.list_messages("alice", "ses_alice", limit=10)) == 3  # with the one added on PG
            await looks_copied(backup, table)
    assert "messages: 4 rows" in there.stdout and f"{table}: 2 vectors (test, 3 dims)" in there.stdout
    assert "every count matches" in there.stdout and "doc_chunks: 1 rows" in there.stdout
    assert refused.returncode == 1 and "already holds data; nothing was copied" in refused.stderr
    assert "--force" in refused.stderr
    assert forced.returncode == 0 and "emptied the target (--force)" in forced.stdout
    assert back.returncode == 0 and "messages: 5 rows" in back.stdout, back.stderr
