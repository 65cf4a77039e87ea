"""The OAuth upkeep part of the contract (issue 30, item 6), on every backend: a registered client that no
grant names is pruned once older than the cutoff, one a grant names never is, and the counts say what is
kept (clients, unused ones, pending requests still live)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord, utcnow

pytestmark = pytest.mark.anyio


async def test_clients_never_used_are_pruned_past_the_cutoff_and_pending_requests_are_counted(store: Store):
    now = utcnow()
    old = now - timedelta(days=2)
    for client_id, at in (("old-unused", old), ("old-used", old), ("new-unused", now)):
        await store.add_oauth_client(client_id, "{}", at=at)
    await store.add_oauth_grant(OAuthGrantRecord("oag_1", "alice", "user", "old-used", "Host", "/mcp", "mcp", old))
    live, spent, expired = (OAuthTokenRecord(h, "request", None, "new-unused", "{}", now, now + timedelta(minutes=m))
                            for h, m in (("h1", 10), ("h2", 10), ("h3", -1)))
    for record in (live, spent, expired):
        await store.add_oauth_token(record)
    assert await store.spend_oauth_token("h2", at=now)
    assert await store.oauth_counts(at=now) == {"clients": 3, "unused_clients": 2, "requests": 1}

    assert await store.prune_oauth_clients(unused_before=now - timedelta(days=1)) == 1
    assert await store.find_oauth_client("old-unused") is None
    assert await store.find_oauth_client("old-used") == "{}" and await store.find_oauth_client("new-unused") == "{}"
    assert await store.prune_oauth_clients(unused_before=now - timedelta(days=1)) == 0
    assert await store.oauth_counts(at=now) == {"clients": 2, "unused_clients": 1, "requests": 1}
