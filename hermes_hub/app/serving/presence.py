"""Which hub serves a store right now: a small file beside the store, locked for as long as the hub serves.

    with announce(config, "hub.json", "http://127.0.0.1:8600/mcp"):   # `hermes-hub serve` (stdio: url None)
        ...
    serving(config)   # -> Presence(pid, url, config, since), or None when no hub serves this store
    with claim(config, "hub.json") as other: ...   # `restore`: other is None once this process holds it

The lock (``flock``) is the truth, not the file: a hub killed with SIGKILL leaves the file but its lock
goes with its process, so a reader never mistakes a dead hub for a live one. The file says where the
live one listens, so commands can talk to it, and ``restore`` refuses to swap the store under it.
A second hub on the same store serves as before; only the first one is announced. Without ``fcntl``
(Windows) nothing is announced and ``serving`` answers None.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hub.infra.storage import default_data_dir, is_postgres, sqlite_path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig

log = logging.getLogger("hermes_hub")
MAX_FILE = 4096  # a presence file is a few hundred bytes; a bigger one is not ours


@dataclass(frozen=True)
class Presence:
    pid: int
    url: str | None  # the /mcp URL of an HTTP hub; None for a stdio hub
    config: str  # the hub.json it serves, as an absolute path
    since: float  # when it started serving (epoch seconds)
    token_required: bool = False  # decided once at start (upstream.exposure): a caller needs a bearer token


def store_of(cfg: HubConfig) -> str:
    """The store ``cfg`` opens, as one string (an SQLite file's absolute path, or the PostgreSQL URL)."""
    from hermes_hub.infra.storage import default_url

    url = cfg.storage.url or default_url()
    if is_postgres(url):
        return url
    return str(sqlite_path(url, cfg.base_dir)[0].resolve())


def presence_file(cfg: HubConfig) -> Path:
    """Beside an SQLite store (``hub.db`` -> ``hub.db.serving``); for PostgreSQL, in the data folder."""
    store = store_of(cfg)
    if is_postgres(store):
        return default_data_dir() / f"serving-{hashlib.sha256(store.encode()).hexdigest()[:16]}"
    return Path(store + ".serving")


@contextlib.contextmanager
def claim(cfg: HubConfig, config_path: str | Path, url: str | None = None, *,
          token_required: bool = False) -> Iterator[Presence | None]:
    """Hold the store's presence for as long as the ``with`` lasts, as this process (``url`` None: not over
    HTTP). Yields None once held, or the ``Presence`` of the hub that holds it already (then nothing is held)."""
    path = presence_file(cfg)
    if fcntl is None:
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield _read(fd) or Presence(0, None, "", 0.0)
            return
        me = Presence(os.getpid(), url, str(Path(config_path).resolve()), time.time(), token_required)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me.__dict__).encode(), 0)
        try:
            yield None
        finally:
            os.ftruncate(fd, 0)  # the lock goes with the fd; an empty file is no claim
    finally:
        os.close(fd)


@contextlib.contextmanager
def announce(cfg: HubConfig, config_path: str | Path, url: str | None, *, token_required: bool = False,
             ) -> Iterator[None]:
    """``claim`` for a serving hub: a second hub on the same store serves anyway, unannounced."""
    with claim(cfg, config_path, url, token_required=token_required) as other:
        if other is not None:
            log.info("another hub (pid %s) already serves this store; this one is not announced", other.pid or "?")
        yield


def serving(cfg: HubConfig) -> Presence | None:
    """The hub that serves ``cfg``'s store now, or None. A held lock whose file cannot be read yet (the hub is
    writing it) is still a live hub: ``Presence`` with pid 0 and no URL."""
    path = presence_file(cfg)
    if fcntl is None or not path.is_file():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: a live hub
            return _read(fd) or Presence(0, None, "", 0.0)
        fcntl.flock(fd, fcntl.LOCK_UN)  # nobody holds it: whatever the file says is over
        return None
    finally:
        os.close(fd)


def _read(fd: int) -> Presence | None:
    try:
        raw: Any = json.loads(os.pread(fd, MAX_FILE, 0) or b"null")
        return Presence(int(raw["pid"]), raw.get("url"), str(raw["config"]), float(raw["since"]),
                        bool(raw.get("token_required")))
    except (ValueError, TypeError, KeyError):
        return None  # being written, or not ours: no claim a command should act on
