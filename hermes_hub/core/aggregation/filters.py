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


@dataclass(frozen=True)
class RoleFilter:
    """Which roles may use a server's tools: ``roles`` for the whole server (None: every role) and
    ``tool_roles`` per tool glob. Admins may use everything."""

    roles: tuple[str, ...] | None = None
    tool_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, roles: Iterable[str] | None, tool_roles: dict[str, list[str]] | None = None) -> RoleFilter:
        return cls(None if roles is None else tuple(roles),
                   tuple((glob, tuple(r)) for glob, r in (tool_roles or {}).items()))

    def __call__(self, name: str, role: str) -> bool:
        if role == "admin":
            return True
        if self.roles is not None and role not in self.roles:
            return False
        return all(role in allowed for glob, allowed in self.tool_roles if fnmatchcase(name, glob))
