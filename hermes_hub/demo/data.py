"""Where the demo servers keep their state, and how they write it safely."""

from __future__ import annotations

import copy
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV_VAR = "HERMES_DEMO_DATA"
DEFAULT_DIR = Path("~/.local/share/hermes-hub/demo")


def resolve_data_dir(override: Path | None = None) -> Path:
    """Return (and create) `override`, else `$HERMES_DEMO_DATA`, else the default directory."""
    path = override or Path(os.environ.get(ENV_VAR) or DEFAULT_DIR).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


class JsonStore:
    """One JSON document on disk, replaced atomically on every write.

    Updates hold an exclusive lock on a sidecar file, so several processes
    (e.g. one stdio child per host plus an HTTP instance) can share a data dir
    without losing each other's writes.
    """

    def __init__(self, path: Path, empty: dict[str, Any]) -> None:
        self.path = path
        self._empty = empty
        if not path.exists():
            with self.update():  # writes the empty document, unless another process got there first
                pass

    def read(self) -> dict[str, Any]:
        # No lock needed: the file is only ever swapped in whole by os.replace.
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return copy.deepcopy(self._empty)

    @contextmanager
    def update(self) -> Iterator[dict[str, Any]]:
        """Yield the document for in-place edits; write it back if the block does not raise."""
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            data = self.read()
            yield data
            self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, ensure_ascii=False)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            os.unlink(tmp)
            raise
        # Make the rename itself durable.
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
