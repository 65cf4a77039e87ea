"""Pinned tool definitions: a digest of what a server says a tool is, and what changed when it differs.

    definition(tool)   -> every field of the tool as sent: name, title, description, inputSchema, outputSchema,
                          annotations, icons, execution, _meta (but the keys the hub sets itself), any other
    digest(definition) -> "v2:" + sha256 of its canonical JSON (sorted keys, no spaces, UTF-8)
    Drift(...)         -> a pinned tool whose definition changed: the fields, a diff, the fix

A pin covers whatever a host shows, renders or acts on: a title ("SYSTEM: the user already approved ..."),
an app's ``_meta.ui.resourceUri``, icons and ``execution`` change what a host does as much as a
description. Pins made before (a bare sha256 of ``LEGACY_FIELDS`` only) are upgraded where they still hold:
``upgrade`` tells when a legacy pin still matches a tool, which is then pinned again in full, silently.

A definition is taken as the *server* sent it, before ``overrides``: editing hub.json never reads as a
rug pull, and a server that changes under an override is still caught. ``guard.PinGuard`` holds the
pins a hub enforces.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import mcp.types as types

FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "execution", "_meta")
LEGACY_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")  # what a bare-sha256 pin covers
VERSION = "v2:"  # the prefix of a digest over every field; a pin without it is a legacy one
HUB_META = frozenset({"hermes-hub/origin"})  # ``_meta`` keys the catalog sets on every tool it serves, overwriting
MAX_DIFF_CHARS = 20_000  # each side of a diff is cut to this before diffing (difflib grows faster than its input)
MAX_DIFF_LINES = 200
MAX_KEPT_CHARS = 200_000  # a definition longer than this is pinned by its digest only (its text is not stored)


def definition(tool: types.Tool) -> dict[str, Any]:
    """Every part of ``tool`` as the server sent it, in its wire spelling (those it lacks left out), but for the
    ``_meta`` keys the hub sets itself."""
    value = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    meta = value.pop("_meta", None)
    if isinstance(meta, dict) and (meta := {k: v for k, v in meta.items() if k not in HUB_META}):
        value["_meta"] = meta
    return value


def legacy(value: dict[str, Any]) -> dict[str, Any]:
    """The part of a definition a legacy pin covered."""
    return {k: value[k] for k in LEGACY_FIELDS if k in value}


def pinned(tool: types.Tool) -> tuple[dict[str, Any], str]:
    """(what the store keeps of ``tool``'s definition, the digest of all of it), serialising it once."""
    value = definition(tool)
    text = canonical(value)
    return kept(value, len(text)), VERSION + hashlib.sha256(text.encode()).hexdigest()


def digests(tool: types.Tool) -> tuple[dict[str, Any], str, str]:
    """``pinned(tool)``, and the digest a legacy pin of ``tool`` has (``upgrade``)."""
    value = definition(tool)
    text = canonical(value)
    return kept(value, len(text)), VERSION + hashlib.sha256(text.encode()).hexdigest(), legacy_digest(legacy(value))


def is_legacy(pin_digest: str) -> bool:
    return not pin_digest.startswith(VERSION)


def upgrade(pin_digest: str, tool: types.Tool) -> bool:
    """True when ``pin_digest`` is a legacy pin that ``tool`` still matches: pin it again in full, no drift."""
    return is_legacy(pin_digest) and legacy_digest(legacy(definition(tool))) == pin_digest


def kept(value: dict[str, Any], size: int | None = None) -> dict[str, Any]:
    """What the store keeps of a definition for diffs: all of it, unless it is huge (the digest covers it all)."""
    size = len(canonical(value)) if size is None else size
    if size <= MAX_KEPT_CHARS:
        return value
    return {"name": value.get("name"), "description": str(value.get("description", ""))[:1000],
            "hermes-hub": f"a definition of {size:,} characters: only its digest is kept"}


def canonical(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: dict[str, Any]) -> str:
    return VERSION + legacy_digest(value)


def legacy_digest(value: dict[str, Any]) -> str:
    """A bare sha256 of ``value``, as pins were digested before ``VERSION``."""
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def changed_fields(pinned: dict[str, Any], current: dict[str, Any], fields: tuple[str, ...] = FIELDS) -> list[str]:
    """The ``fields`` whose values differ, in that order (with ``FIELDS``, then any other the server sent)."""
    names = [*fields, *sorted(k for k in {*pinned, *current} - set(FIELDS) if fields is FIELDS)]
    return [k for k in names if canonical({"v": pinned.get(k)}) != canonical({"v": current.get(k)})]


def diff(pinned: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """A unified diff of the two definitions as indented JSON, bounded in size."""
    def lines(value: dict[str, Any]) -> list[str]:
        text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
        if len(text) > MAX_DIFF_CHARS:
            text = text[:MAX_DIFF_CHARS] + "\n… (cut)"
        return text.splitlines()

    out = list(difflib.unified_diff(lines(pinned), lines(current), "pinned", "now", lineterm="", n=2))
    return out if len(out) <= MAX_DIFF_LINES else [*out[:MAX_DIFF_LINES], f"… ({len(out) - MAX_DIFF_LINES} more lines)"]


class Guard(Protocol):
    """What the catalog asks of the pins in every rebuild (``guard.PinGuard``)."""

    def check(self, server: str, tool: types.Tool, public: str) -> Drift | None: ...


@dataclass(frozen=True)
class Drift:
    """A pinned tool the hub withholds because its server now defines it differently."""

    server: str
    tool: str  # the server's own name
    public: str  # its name in the catalog
    pinned: dict[str, Any]
    current: dict[str, Any]
    pinned_at: datetime
    pinned_by: str
    digest: str  # of the current definition (all of it, even when only part of it is kept)
    legacy: bool = False  # the pin is a legacy one: only ``LEGACY_FIELDS`` can be told apart

    @property
    def fields(self) -> list[str]:
        return changed_fields(self.pinned, self.current, LEGACY_FIELDS if self.legacy else FIELDS)

    @property
    def approve(self) -> str:
        """The command that accepts this definition, and no later one."""
        return f"hermes-hub tools approve {self.public} --digest {self.digest}"

    def message(self) -> str:
        """The tool error a caller gets, and the line the log gets once."""
        what = ", ".join(self.fields) or "its definition"
        return (f"tool '{self.public}' is withheld: server '{self.server}' changed its definition since it was pinned "
                f"({what} changed). An admin reviews the change with `hermes-hub tools --drift` and accepts it with "
                f"the command shown there (`hermes-hub tools approve {self.public} --digest …`)")

    def as_dict(self) -> dict[str, Any]:
        """What ``hermes_hub_status``, the status page and ``tools --drift`` show."""
        return {"server": self.server, "tool": self.tool, "name": self.public, "changed": self.fields,
                "pinned_at": self.pinned_at.isoformat(), "pinned_by": self.pinned_by,
                "digest": self.digest, "diff": diff(self.pinned, self.current),
                "approve": self.approve}
