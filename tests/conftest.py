from collections import Counter
from pathlib import Path

import pytest

EXTERNAL = ("interop", "web")  # folders whose tests drive third-party tools (npm, Python venvs) or Chromium


def pytest_collection_modifyitems(config, items):
    """The tiers (docs/testing.md): a test is ``slow`` when marked so, when it lives in a folder of
    third-party tools or the browser, or when it needs PostgreSQL; ``make test-fast`` runs the rest.
    Files with the most slow tests are collected first, so the workers (a file each) start on the long files and
    the short ones fill the end, instead of one worker finishing a long file alone."""
    here = Path(__file__).parent
    for item in items:
        folder = Path(item.path).relative_to(here).parts[0]
        if folder in EXTERNAL or "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    slow_in: Counter[Path] = Counter(item.path for item in items if item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: -slow_in[item.path])  # stable: each file's tests stay together, in order


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
