import pytest


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"  # module-scoped: one served hub per module
