"""Allow/deny predicates over a server's own tool names (shell-style globs)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class NameFilter:
    """``allow=None`` admits every name; ``deny`` always wins over ``allow``."""

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    @classmethod
    def of(cls, allow: Iterable[str] | None, deny: Iterable[str] = ()) -> NameFilter:
        return cls(None if allow is None else tuple(allow), tuple(deny))

    def __call__(self, name: str) -> bool:
        if any(fnmatchcase(name, p) for p in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(name, p) for p in self.allow)
