"""Which Python runs a bundled demo server.

The bundled hub.json says ``"command": "python"`` so that it reads like any config pasted from a host,
but outside ``make`` the ``python`` on ``PATH`` is often a system Python without the ``mcp`` package:
the demo servers would crash-loop with ``ModuleNotFoundError``. So a ``python``/``python3`` command that
runs one of the demo servers (``-m hermes_hub.demo.calendar``, or from a checkout ``-m servers.calendar``,
the repository's shim for it) runs with the hub's own interpreter, which has them and their dependencies. Every other command,
``python`` included, is looked up on ``PATH`` as written: a pasted server may need a Python of its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

PYTHONS = frozenset({"python", "python3"})
DEMO_SERVERS = frozenset({"calendar", "notes", "reminders"})  # hermes_hub/demo/, installed with the hub
# The repository's top-level servers/ folder (a checkout only; never installed): `python -m servers.NAME`.
BUNDLED = Path(__file__).resolve().parents[2] / "servers"


def bundled_demo(command: str, args: Sequence[str], cwd: Path | None) -> str | None:
    """The hub's own interpreter when ``command args`` runs a bundled demo server, else None.

    >>> bundled_demo("python", ["-m", "servers.notes"], None) == sys.executable
    True
    """
    if command not in PYTHONS or len(args) < 2 or args[0] != "-m":
        return None
    package, _, module = args[1].rpartition(".")
    if package == "hermes_hub.demo" and module in DEMO_SERVERS:
        return sys.executable
    if package != "servers" or not module or module.startswith("_"):
        return None
    if not (BUNDLED / f"{module}.py").is_file():
        return None
    # `python -m` imports from its cwd first: a `servers` folder of the user's own there is theirs to run.
    local = (cwd or Path.cwd()) / "servers"
    if local.exists() and not _same(local, BUNDLED):
        return None
    return sys.executable


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
