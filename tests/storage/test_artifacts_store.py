"""The ArtifactStore part of the contract, on every backend: owner-only pages, counts, the cascade from
the session, and the sweep of old artifacts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hermes_hub.infra.errors import NotFound
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import ArtifactRecord, utcnow

pytestmark = pytest.mark.anyio


def artifact(aid: str, sid: str, text: str, *, user: str = "alice", age: timedelta = timedelta(0)) -> ArtifactRecord:
    return ArtifactRecord(aid, user, sid, "run_1", "toy_big", "text/plain", text, len(text), utcnow() - age)


async def test_an_artifact_reads_back_page_by_page_for_its_owner_only_and_goes_with_its_session(store: Store):
    sessions = Sessions(store)
    sid = (await sessions.create("alice", "t")).session_id
    other = (await sessions.create("alice", "u")).session_id
    await store.add_artifact(artifact("art_a", sid, "北京" * 10 + "abc"))
    await store.add_artifact(artifact("art_b", other, "kept"))
    page = await store.get_artifact("alice", "art_a", offset=19, limit=3)
    whole = await store.get_artifact("alice", "art_a")
    with pytest.raises(NotFound):
        await store.get_artifact("bob", "art_a")
    counts = (await store.artifact_counts("alice"), await store.artifact_counts(None), await store.artifact_counts("bob"))
    await sessions.delete("alice", sid)
    with pytest.raises(NotFound):
        await store.get_artifact("alice", "art_a")
    assert (page.text, page.chars) == ("京ab", 23)  # offsets count characters, not bytes
    assert whole.text == "北京" * 10 + "abc" and whole.created_at <= utcnow()
    assert counts == ({"count": 2, "chars": 27}, {"count": 2, "chars": 27}, {"count": 0, "chars": 0})
    assert (await store.get_artifact("alice", "art_b")).text == "kept"


async def test_pruning_deletes_only_artifacts_older_than_the_cutoff(store: Store):
    sid = (await Sessions(store).create("alice", "t")).session_id
    await store.add_artifact(artifact("art_old", sid, "old", age=timedelta(days=40)))
    await store.add_artifact(artifact("art_new", sid, "new"))
    assert await store.prune_artifacts(utcnow() - timedelta(days=30)) == 1
    assert (await store.get_artifact("alice", "art_new")).text == "new"
    with pytest.raises(NotFound):
        await store.get_artifact("alice", "art_old")
