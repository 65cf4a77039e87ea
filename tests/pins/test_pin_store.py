"""The pins' part of the store, on both backends: first sight keeps the first pin, a change seen is kept
beside it, approving pins what was seen; ``hermes-hub storage migrate`` copies the rows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import anyio
import pytest

from hermes_hub.core.aggregation.pins import digest
from hermes_hub.infra.storage import Store, open_store
from hermes_hub.infra.storage.copy import copy_store
from hermes_hub.infra.storage.records import PinRecord
from tests.postgres import new_database

pytestmark = pytest.mark.anyio
AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[Store]:
    with anyio.fail_after(30):
        url = (f"sqlite:///{tmp_path / 'hub.db'}" if request.param == "sqlite"
               else await new_database(request.getfixturevalue("pg_server")))
    async with open_store(url) as opened:
        yield opened


def pin(tool: str, description: str, by: str = "auto") -> PinRecord:
    definition = {"name": tool, "description": description, "inputSchema": {"type": "object"}}
    return PinRecord("git", tool, digest(definition), definition, AT, by)


async def test_a_tool_pinned_already_keeps_its_first_pin(store):
    assert await store.add_pins([pin("status", "Show status."), pin("delete", "Delete a branch.")]) == 2
    assert await store.add_pins([pin("delete", "Delete a branch and its reflog.", "alice"), pin("log", "Log.")]) == 1
    pins = await store.list_pins("git")
    assert [(p.tool, p.definition["description"], p.pinned_by) for p in pins] == [
        ("delete", "Delete a branch.", "auto"), ("log", "Log.", "auto"), ("status", "Show status.", "auto")]
    assert await store.list_pins("other") == [] and len(await store.list_pins()) == 3


async def test_approving_pins_the_definition_seen_and_only_where_one_was_seen(store):
    await store.add_pins([pin("status", "Show status."), pin("delete", "Delete a branch.")])
    changed = pin("delete", "Delete a branch. Also push --force.")
    await store.note_seen("git", "delete", changed.digest, changed.definition, at=AT)
    (seen,) = [p for p in await store.list_pins("git") if p.seen_digest]
    assert (seen.tool, seen.seen_definition, seen.seen_at) == ("delete", changed.definition, AT)

    assert await store.approve_pins("git", "status", digests=[changed.digest], by="alice", at=AT) == []  # none seen
    (approved,) = await store.approve_pins("git", None, digests=[changed.digest], by="alice", at=AT)
    assert (approved.tool, approved.digest, approved.definition, approved.pinned_by) == (
        "delete", changed.digest, changed.definition, "alice")
    assert approved.seen_digest is None and approved.seen_definition is None
    await store.note_seen("git", "status", "d" * 64, {"name": "status"}, at=AT)
    await store.note_seen("git", "status", None, None, at=AT)  # it sends the pinned one again
    assert all(p.seen_digest is None and p.seen_at is None for p in await store.list_pins("git"))


async def test_approving_pins_only_the_definition_of_the_digest_given_not_one_seen_since(store):
    await store.add_pins([pin("delete", "Delete a branch.")])
    reviewed = pin("delete", "Delete a branch. Also push --force.")
    newer = pin("delete", "Delete a branch. Also push --force, then mail the reflog out.")
    await store.note_seen("git", "delete", reviewed.digest, reviewed.definition, at=AT)  # what --drift showed
    await store.note_seen("git", "delete", newer.digest, newer.definition, at=AT)  # the server changed again
    assert await store.approve_pins("git", "delete", digests=[reviewed.digest], by="alice", at=AT) == []
    assert await store.approve_pins("git", None, digests=[reviewed.digest], by="alice", at=AT) == []
    assert await store.approve_pins("git", "delete", digests=[], by="alice", at=AT) == []
    (held,) = await store.list_pins("git")
    assert (held.definition["description"], held.pinned_by, held.seen_digest) == ("Delete a branch.", "auto",
                                                                                  newer.digest)
    (approved,) = await store.approve_pins("git", "delete", digests=[reviewed.digest, newer.digest], by="alice", at=AT)
    assert (approved.digest, approved.pinned_by, approved.seen_digest) == (newer.digest, "alice", None)


async def test_a_legacy_pin_is_upgraded_only_while_the_row_still_holds_it(store):
    old = PinRecord("git", "delete", "a" * 64, {"name": "delete"}, AT, "alice")
    await store.add_pins([old])
    await store.note_seen("git", "delete", "v2:" + "b" * 64, {"name": "delete", "title": "x"}, at=AT)
    full = pin("delete", "Delete a branch.")
    assert await store.upgrade_pins([("c" * 64, full)]) == 0  # another process moved it: left alone
    assert await store.upgrade_pins([("a" * 64, full)]) == 1
    (row,) = await store.list_pins("git")
    assert (row.digest, row.definition, row.pinned_by, row.pinned_at, row.seen_digest) == (
        full.digest, full.definition, "alice", AT, None)


async def test_storage_migrate_copies_the_pins(store, tmp_path):
    await store.add_pins([pin("delete", "Delete a branch.")])
    await store.note_seen("git", "delete", "e" * 64, {"name": "delete"}, at=AT)
    async with open_store(f"sqlite:///{tmp_path / 'copy.db'}") as target:
        report = await copy_store(store, target)
        copied = await target.list_pins()
    assert ("tool_pins", 1, 1) in report.counts
    assert copied == await store.list_pins()
