"""A consistent copy of an SQLite store, taken while hubs write to it, and putting one back.

    take(Path("~/.local/share/hermes-hub/hub.db"), Path("backup.db"))    # SQLite's online backup
    kept = put_back(Path("backup.db"), store_path)                        # the old store kept aside

``take`` uses SQLite's backup API: pages are copied from one read transaction, so the copy is the store
at one moment (a write that commits meanwhile is in it entirely or not at all), and the hub keeps
serving. ``put_back`` first checks the snapshot is a hermes-hub store that SQLite finds whole, writes it
beside the store, then swaps it in with a rename: a crash leaves the old store or the new one, never a
mix. The old store (with its ``-wal`` and ``-shm``) is renamed aside, not deleted. Nothing here knows
whether a hub has the store open: the command asks ``app.serving.presence`` first.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import sqlean
import sqlite_vec

from hermes_hub.infra.errors import StorageError

SIDE_FILES = ("-wal", "-shm")
COUNTED = ("sessions", "messages", "memories")  # what `backup` and `restore` report, when the tables exist


def _open(path: Path, *, readonly: bool) -> Any:
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    db = sqlean.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30)
    db.enable_load_extension(True)
    sqlite_vec.load(db)  # the memories' vector tables are vec0 tables
    db.enable_load_extension(False)
    return db


def take(store: Path, target: Path) -> dict[str, int]:
    """Copy the live store at ``store`` to ``target`` (a new file, mode 0600); the copy's row counts."""
    if not store.is_file():
        raise StorageError(f"there is no store at {store} yet: nothing to back up (a hub creates it when it "
                           f"first starts)")
    if target.exists():
        raise StorageError(f"{target} exists; nothing was written. Give a new file name, or move it away")
    partial = target.with_name(f".{target.name}.partial")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        src, dst = _open(store, readonly=True), _open(partial, readonly=False)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
        counts = check(partial)
        os.replace(partial, target)
    except sqlean.Error as exc:
        raise StorageError(f"backing up {store} failed: {exc}; nothing was written to {target}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return counts


def check(path: Path) -> dict[str, int]:
    """That ``path`` is a hermes-hub store SQLite finds whole; its row counts (``COUNTED``)."""
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from exc
    if head != b"SQLite format 3\x00":
        raise StorageError(f"{path} is not an SQLite database, so not a hermes-hub backup")
    db = _open(path, readonly=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_migrations" not in tables:
            raise StorageError(f"{path} is an SQLite database but not a hermes-hub store (it has no "
                               f"schema_migrations table)")
        verdict = db.execute("PRAGMA quick_check").fetchone()[0]
        if verdict != "ok":
            raise StorageError(f"{path} is damaged (SQLite's quick_check: {verdict}); it cannot be restored")
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED if t in tables}
    except sqlean.Error as exc:
        raise StorageError(f"cannot read {path} as a hermes-hub store: {exc}") from exc
    finally:
        db.close()


def put_back(snapshot: Path, store: Path) -> tuple[dict[str, int], Path | None]:
    """Swap ``snapshot`` in as the store at ``store``; (its row counts, where the old store was kept)."""
    counts = check(snapshot)
    store.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    incoming = store.with_name(f".{store.name}.restoring")
    try:
        fd = os.open(incoming, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        src, dst = _open(snapshot, readonly=True), _open(incoming, readonly=False)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
        kept = None
        if store.exists():
            kept = store.with_name(f"{store.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
            for side in SIDE_FILES:  # the old store's journal goes with it: it is that store's, not the new one's
                if Path(f"{store}{side}").exists():
                    os.replace(f"{store}{side}", f"{kept}{side}")
            os.replace(store, kept)
        os.replace(incoming, store)
    except sqlean.Error as exc:
        raise StorageError(f"restoring {snapshot} failed: {exc}; the store at {store} is unchanged") from exc
    finally:
        incoming.unlink(missing_ok=True)
    return counts, kept
