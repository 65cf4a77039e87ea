""""Did you mean": the names a caller may use that are closest to one they got wrong.

A name without its server's prefix (``query`` for ``calendar_query``) is the commonest slip, so names
ending in it come first; then ``difflib``'s close matches (typos, a word left out).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

LONGEST = 128  # public names are at most 64 characters; a longer one is no slip worth comparing


def close_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``names`` that ``name`` was probably meant to be.

    >>> close_names("calender_query", ["calendar_query", "notes_create_note"])
    ['calendar_query']
    """
    if not name or len(name) > LONGEST:
        return []
    names = sorted(set(names))
    unprefixed = [c for c in names if c.endswith(f"_{name}") or c.endswith(f"-{name}")]
    close = difflib.get_close_matches(name, names, n=n, cutoff=0.75)
    return list(dict.fromkeys(unprefixed + close))[:n]


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """``"did you mean 'a' or 'b'? "``, or ``""`` when nothing is close."""
    found = close_names(name, names)
    if not found:
        return ""
    quoted = [f"'{c}'" for c in found]
    return f"did you mean {' or '.join(quoted) if len(quoted) < 3 else ', '.join(quoted[:-1]) + ' or ' + quoted[-1]}? "
