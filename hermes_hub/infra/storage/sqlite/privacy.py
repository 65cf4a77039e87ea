"""The SQLite store is its owner's alone: the data folder 0700, ``hub.db`` and its ``-wal``, ``-shm`` and
``-journal`` 0600, whatever the umask (under 022 SQLite would make them 0644, readable by every OS user).

    changed = make_private(Path("~/.local/share/hermes-hub/hub.db"), own_folder=True)

The file is created empty with mode 0600 before SQLite first opens it (SQLite gives the files it adds the
database file's mode, so ``-wal`` and ``-shm`` follow). Files and a folder left open by an earlier version
are closed on start, and the caller logs what changed. A folder the hub did not make, and that is not its
data folder (``storage.url`` naming a file in a project folder), keeps its mode: its files are private,
and the caller says how to hide their names too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hermes_hub.infra.errors import StorageError

SIDE_FILES = ("-wal", "-shm", "-journal")
OTHERS = 0o077  # group and other bits


def make_private(db: Path, *, own_folder: bool) -> tuple[list[str], str | None]:
    """(what was changed, as ``PATH 0755 -> 0700``; a note on a folder left open, or None).

    ``own_folder``: the folder is the hub's data folder, closed even if it already existed."""
    if os.name != "posix":
        return [], None
    changed: list[str] = []
    folder = db.parent
    try:
        if not folder.exists():
            folder.mkdir(parents=True, mode=0o700)
            own_folder = True
        if own_folder:
            _close(folder, changed)
        try:
            os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
        for path in (db, *(db.with_name(db.name + side) for side in SIDE_FILES)):
            if path.exists():
                _close(path, changed)
    except OSError as exc:
        raise StorageError(f"cannot make the store private at {exc.filename or db}: {exc.strerror}; the hub's OS "
                           f"user must own it (chmod 700 {folder}; chmod 600 {db}*)") from exc
    mode = stat.S_IMODE(folder.stat().st_mode)
    note = None if own_folder or not mode & 0o007 else (
        f"the folder {folder} holding the store lets other OS users list it (mode {mode:o}); the store's files "
        f"are 0600, so only their names show: chmod 700 {folder} to hide those too")
    return changed, note


def _close(path: Path, changed: list[str]) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & OTHERS:
        os.chmod(path, mode & ~OTHERS)
        changed.append(f"{path} {mode:04o} -> {mode & ~OTHERS:04o}")


__all__ = ["make_private"]
