import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _home(tmp_path_factory):
    """The suite never reaches the user's home. A child started with an environment cut down to the SDKs'
    allow-list (HOME, PATH, USER, ...: the hub's own stdio transport, ``StdioServerParameters``) loses
    HERMES_DATA_DIR and falls back to $HOME/.local/share/hermes-hub; here that is a throw-away folder."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
        yield home


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory, monkeypatch):
    """Every hub a test starts (in-process or as a process) keeps its store in a fresh directory;
    hubs started with a cut-down environment get theirs from ``tests.support.hub_env``."""
    monkeypatch.setenv("HERMES_DATA_DIR", str(tmp_path_factory.mktemp("hermes-data")))


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL (pgvector, pg_trgm) for the whole session; tests make their own databases."""
    from tests.postgres import start, stop

    server = start()
    yield server
    stop(server)
