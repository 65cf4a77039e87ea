"""Pending approvals in the store, on both backends: a replica waiting for an answer sees the one another
replica (or the CLI) wrote; the store's updates bind every answer and every spent yes to the identity,
tool and digest it is for."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import anyio
import pytest

from hermes_hub.infra.call import Identity
from hermes_hub.infra.errors import NotFound
from hermes_hub.core.pipeline.approvals import Approvals, digest_of
from hermes_hub.infra.storage import Store, open_store
from tests.storage.conftest import BACKENDS, url_for

pytestmark = pytest.mark.anyio


@pytest.fixture(params=BACKENDS)
async def replicas(request, tmp_path) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores open on one database, as two hub replicas (or a hub and the CLI) have them."""
    async with AsyncExitStack() as stack:
        with anyio.fail_after(30):
            url = await url_for(request, tmp_path)
            first = await stack.enter_async_context(open_store(url))
            second = await stack.enter_async_context(open_store(url))
        yield first, second


async def test_a_call_waiting_on_one_replica_runs_with_the_yes_given_on_another(replicas):
    here, there = (Approvals(lambda s=s: s) for s in replicas)
    ana = Identity("ana")
    record = await here.open(ana, "notes_delete", "notes", {"id": 7}, timeout=30)
    async with anyio.create_task_group() as tg:
        seen = {}

        async def wait() -> None:
            seen["record"] = await here.wait(record)

        tg.start_soon(wait)
        with anyio.fail_after(10):
            while record.id not in here.parked:  # the seam a tasks-speaking host would watch
                await anyio.sleep(0.01)
        with pytest.raises(NotFound):
            await there.decide(record.id, Identity("bob"), approve=True, via="cli")
        await there.decide(record.id, ana, approve=True, via="cli")
    assert (seen["record"].state, seen["record"].decided_by, seen["record"].decided_via) == ("approved", "ana", "cli")
    assert here.parked == {}
    assert await there.use(ana, "notes_delete", await digest_of({"id": 8})) is None  # other arguments
    assert await there.use(Identity("ana", "admin"), "notes_delete", record.digest) is None  # another identity
    assert (await here.use(ana, "notes_delete", record.digest, record.id)).state == "used"
    assert await there.use(ana, "notes_delete", record.digest) is None  # spent once


async def test_an_expired_approval_can_no_longer_be_answered(replicas):
    here, there = (Approvals(lambda s=s: s) for s in replicas)
    ana = Identity("ana")
    record = await here.open(ana, "notes_delete", "notes", {"id": 7}, timeout=0.2)
    with anyio.fail_after(10):
        assert (await here.wait(record)).state == "expired"
    with pytest.raises(NotFound):
        await there.decide(record.id, ana, approve=True, via="cli")
    assert await there.pending(ana) == []
