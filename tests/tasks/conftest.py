import pytest


@pytest.fixture(scope="module")
def anyio_backend():
    """Module scope, so a module can share one hub (with its downstream processes) between tests."""
    return "asyncio"


@pytest.fixture(scope="module", autouse=True)
def _module_data_dir(tmp_path_factory):
    """A module's shared hub starts before tests/conftest.py's function-scoped data folder: its own here."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HERMES_DATA_DIR", str(tmp_path_factory.mktemp("hermes-data")))
        yield
