"""Stores for the storage tests: one real database per test, for every backend the hub has."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

from hermes_hub.sessions import Sessions
from hermes_hub.storage import Store, open_store

BACKENDS = ["sqlite"]  # add "postgresql" here when that backend lands: the contract suite runs on each


def url_for(backend: str, tmp_path: Path) -> str:
    return {"sqlite": f"sqlite:///{tmp_path / 'data' / 'hub.db'}"}[backend]


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with AsyncExitStack() as stack:  # closing is bounded inside the store (CLOSE_TIMEOUT)
        with anyio.fail_after(10):
            opened = await stack.enter_async_context(open_store(url_for(request.param, tmp_path)))
        yield opened


@pytest.fixture
def sessions(store: Store) -> Sessions:
    return Sessions(store)
