"""What hub.json says instead of a server about its tools: ``mcpServers.NAME.overrides``.

    Overrides.of({"delete": ToolOverride(annotations={"destructiveHint": True})}).apply(tool)

Per tool, by the server's own name: a new ``title``, a ``description`` that replaces the server's or a
``description_append`` added after it, and ``annotations`` merged over the server's (for servers that
send none, or wrong ones). The catalog applies them before anything reads a tool, so hosts' lists, the
agent, lazy search and what annotations decide (retries, the agent's confirmations) all see the result.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types

from hermes_hub.infra.config import ToolOverride

SHOWN = ("title", "description", "annotations")  # the fields an override may change, as `tools --show` lists them


@dataclass(frozen=True)
class Overrides:
    """One server's overrides; empty changes nothing."""

    by_tool: Mapping[str, ToolOverride] = field(default_factory=dict)

    @classmethod
    def of(cls, overrides: Mapping[str, ToolOverride] | None) -> Overrides:
        return cls(dict(overrides or {}))

    def apply(self, tool: types.Tool) -> types.Tool:
        """``tool`` as hub.json says it is (the same object when nothing applies)."""
        o = self.by_tool.get(tool.name)
        if o is None:
            return tool
        update: dict[str, Any] = {}
        if o.title is not None:
            update["title"] = o.title
        if o.description is not None:
            update["description"] = o.description
        elif o.description_append is not None:
            update["description"] = "\n".join(p for p in (tool.description, o.description_append) if p)
        if o.annotations is not None:
            given = o.annotations.model_dump(exclude_none=True)
            base = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
            update["annotations"] = types.ToolAnnotations.model_validate({**base, **given})
        return tool.model_copy(update=update) if update else tool

    def unknown(self, tools: Iterable[types.Tool], config_path: str) -> list[str]:
        """A warning for each override naming a tool the server does not have (not an error: servers change)."""
        if not self.by_tool:
            return []
        names = sorted({t.name for t in tools})
        out = []
        for name in self.by_tool:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"its tools: {', '.join(names) or 'none'}"
                out.append(f"{config_path}.overrides.{name}: the server has no tool '{name}', so this override "
                           f"does nothing; {hint}")
        return out


def changes(original: types.Tool, public: types.Tool) -> dict[str, tuple[Any, Any]]:
    """``{field: (the server's value, the served value)}`` for each field of ``SHOWN`` an override changed."""
    out = {}
    for name in SHOWN:
        before, after = getattr(original, name), getattr(public, name)
        if name == "annotations":
            before = before.model_dump(by_alias=True, exclude_none=True) if before else None
            after = after.model_dump(by_alias=True, exclude_none=True) if after else None
        if name == "description" and isinstance(after, str) and after != before and " … [hermes-hub: cut" in after:
            continue  # cut for length by the catalog, not overridden
        if before != after:
            out[name] = (before, after)
    return out
