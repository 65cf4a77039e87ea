import pytest


@pytest.fixture(scope="module")
def anyio_backend():
    """Module scope, so one served hub serves a whole test module."""
    return "asyncio"
