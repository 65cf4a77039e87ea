"""Stores for the storage tests: one real database per test, for every backend the hub has."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store, open_store
from tests.postgres import new_database

BACKENDS = ["sqlite", "postgresql"]  # the contract suite runs on each


async def url_for(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of the test's backend (PostgreSQL: one server per session, a database per test)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'data' / 'hub.db'}"
    return await new_database(request.getfixturevalue("pg_server"))


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with AsyncExitStack() as stack:  # closing is bounded inside the store (CLOSE_TIMEOUT)
        with anyio.fail_after(30):
            url = await url_for(request, tmp_path)
            opened = await stack.enter_async_context(open_store(url))
        yield opened


@pytest.fixture
def sessions(store: Store) -> Sessions:
    return Sessions(store)
