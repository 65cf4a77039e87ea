"""Where the hub keeps its state: sessions, messages, API token hashes, audit rows, session locks.

    async with open_store("sqlite:///~/.local/share/hermes-hub/hub.db") as store:
        await store.list_sessions("alice", limit=20)

``storage.url`` forms:

* ``sqlite:///relative/path.db`` (relative to ``base_dir``, e.g. hub.json's folder), ``sqlite:////abs/hub.db``
  or ``sqlite:///~/hub.db``; ``?synchronous=full`` for power-loss durability (see ``storage.sqlite``).
* ``postgresql://user:pass@host:5432/db`` or ``postgresql://user@/db?host=/socket/dir``: several hub
  replicas share one database (see ``storage.postgres``); ``?pool_size=`` and ``?statement_timeout=``.

The default (``open_store()`` with no URL) is ``$HERMES_DATA_DIR/hub.db``; without ``HERMES_DATA_DIR``,
``$XDG_DATA_HOME/hermes-hub/hub.db``, i.e. ``~/.local/share/hermes-hub/hub.db``. Parent folders are created;
the store's folder 0700 and its files 0600 (``storage.sqlite.privacy``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from hermes_hub.infra.errors import StorageError
from hermes_hub.infra.storage.base import Store
from hermes_hub.infra.storage.locks import Lease

__all__ = ["Lease", "Store", "default_data_dir", "default_url", "is_postgres", "open_store", "sqlite_path"]


POSTGRES_SCHEMES = ("postgres", "postgresql")


def is_postgres(url: str | None) -> bool:
    return bool(url) and urlsplit(url).scheme.lower() in POSTGRES_SCHEMES  # type: ignore[arg-type]


def default_data_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("HERMES_DATA_DIR"):
        return Path(env["HERMES_DATA_DIR"]).expanduser()
    xdg = env.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(xdg).expanduser() / "hermes-hub"


def default_url(env: dict[str, str] | None = None) -> str:
    return f"sqlite:///{default_data_dir(env) / 'hub.db'}"


def sqlite_path(url: str, base_dir: Path | None = None) -> tuple[Path, dict[str, str]]:
    """The file and options of a ``sqlite:///`` URL; ``StorageError`` for anything else."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in POSTGRES_SCHEMES:
        raise StorageError(f"storage.url {_redact(url)!r} names a PostgreSQL database, not an SQLite file")
    if scheme != "sqlite":
        raise StorageError(f"storage.url {_redact(url)!r}: unsupported scheme {parts.scheme!r}; "
                           "use 'sqlite:///path/to/hub.db' or 'postgresql://user:pass@host/db'")
    if parts.netloc or not parts.path.startswith("/") or parts.path == "/":
        raise StorageError(f"storage.url {url!r} names no file; write 'sqlite:///hub.db' (relative), "
                           "'sqlite:////abs/path/hub.db' or 'sqlite:///~/hub.db'")
    path = Path(unquote(parts.path[1:])).expanduser()
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    options = {k.lower(): v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(options) - {"synchronous"}
    if unknown:
        raise StorageError(f"storage.url {url!r}: unknown option(s) {', '.join(sorted(unknown))}; "
                           "the only option is ?synchronous=normal|full")
    return path, options


@asynccontextmanager
async def open_store(url: str | None = None, *, base_dir: Path | None = None) -> AsyncIterator[Store]:
    """Open the store named by ``url`` (default: ``default_url()``), migrated and ready; close on exit."""
    # the driver is imported only when a store is opened
    if is_postgres(url):
        from hermes_hub.infra.storage.postgres import open_postgres

        async with open_postgres(url) as pg:  # type: ignore[arg-type]
            yield pg
        return
    from hermes_hub.infra.storage.sqlite import open_sqlite

    path, options = sqlite_path(url or default_url(), base_dir)
    own = path.parent.resolve() == default_data_dir().resolve()  # a folder storage.url names may be a project's
    async with open_sqlite(path, synchronous=options.get("synchronous", "NORMAL"), own_folder=own) as store:
        yield store


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
