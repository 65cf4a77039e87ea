import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory, monkeypatch):
    """Every hub a test starts (in-process or as a process) keeps its store in a fresh directory."""
    monkeypatch.setenv("HERMES_DATA_DIR", str(tmp_path_factory.mktemp("hermes-data")))
