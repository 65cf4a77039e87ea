"""One index of public names: what the catalog builds from its mounts' lists, once shared and once per
user of a ``per_user`` server.

    index = build(mounts, lists=lambda m: m.source if m.source.ready else None, shape=served)

``lists(mount)`` is what a mount lists (anything with ``tools``, ``resources``, ``templates`` and
``prompts``; None: nothing now). The shared index takes each source's own lists (a ``per_user``
server's are those of its credential-free probe); a user's index takes their own connection's lists
for such a server (``Accounts.listing``). ``shape(mount, tool, withheld)`` is the tool as served, or None
to withhold it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types

from hermes_hub.core.aggregation import apps, overrides, reserved
from hermes_hub.core.aggregation.mounts import Collision, Entry, Mount
from hermes_hub.core.aggregation.namespace import name_problem
from hermes_hub.core.aggregation.shaping import Withheld

ORIGIN_META = "hermes-hub/origin"
# A description past this is served cut, with a marker: no host reads megabytes of it, some cannot
# (the SDK's client refuses an SSE event over 1 MB), and everything the hub derives grows with it.
MAX_DESCRIPTION_CHARS = 16_000

Shape = Callable[[Mount, types.Tool, Withheld], "types.Tool | None"]


@dataclass
class Index:
    tools: dict[str, Entry] = field(default_factory=dict)
    prompts: dict[str, Entry] = field(default_factory=dict)
    resources: dict[str, Entry] = field(default_factory=dict)
    templates: dict[str, Entry] = field(default_factory=dict)
    collisions: list[Collision] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    withheld: Withheld = field(default_factory=dict)
    own: dict[int, Any] = field(default_factory=dict)  # mount position -> the lists it took (not the source's)

    @property
    def tool_list(self) -> list[types.Tool]:
        return [e.item for e in self.tools.values()]

    def lists_of(self, position: int, mount: Mount) -> Any:
        """What ``mount`` (at ``position``) listed into this index: its source, or a user's own connection."""
        return self.own.get(position, mount.source)


def build(mounts: Sequence[Mount], lists: Callable[[Mount], Any], shape: Shape) -> Index:
    index = Index()
    for m in mounts:
        if (src := lists(m)) is None:
            continue
        ns = m.namespace
        for tool in src.tools:
            if m.tool_filter(tool.name) and (served := shape(m, tool, index.withheld)):
                add(index.tools, "tool", m, tool.name, ns.name(tool.name), served, index.collisions, index.warnings,
                    overrides.changes(tool, served) if m.overrides.by_tool.get(tool.name) else None)
        index.warnings += m.overrides.unknown(src.tools, m.config_path)
        for prompt in src.prompts:
            add(index.prompts, "prompt", m, prompt.name, ns.name(prompt.name), apps.with_meta(prompt, ns),
                index.collisions, index.warnings)
        for res in src.resources:
            add(index.resources, "resource", m, res.uri, ns.uri(res.uri), res, index.collisions)
        for tpl in src.templates:
            add(index.templates, "template", m, tpl.uri_template, ns.uri(tpl.uri_template), tpl, index.collisions)
    return index


def add(index: dict[str, Entry], kind: str, m: Mount, original: str, public: str, item: Any,
        collisions: list[Collision], warnings: list[str] | None = None,
        overridden: dict[str, tuple[Any, Any]] | None = None) -> None:
    if public in index:
        collisions.append(Collision(kind, public, index[public].mount.source.name, m.source.name))
        return
    key = "uri_template" if kind == "template" else "uri" if kind == "resource" else "name"
    origin: dict[str, Any] = {"server": m.source.name, key: original}
    if overridden:  # the server's own values of what hub.json overrides, so `tools --show` over a URL has them
        origin["overridden"] = {field: before for field, (before, _) in overridden.items()}
    meta = {**(reserved.scrub(item.meta) or {}), ORIGIN_META: origin}
    update: dict[str, Any] = {key: public, "meta": meta}
    if len(description := getattr(item, "description", None) or "") > MAX_DESCRIPTION_CHARS:
        update["description"] = (f"{description[:MAX_DESCRIPTION_CHARS]} … [hermes-hub: cut from "
                                 f"{len(description):,} characters]")
        if warnings is not None:
            warnings.append(f"{kind} '{public}' has a description of {len(description):,} characters; the hub "
                            f"serves its first {MAX_DESCRIPTION_CHARS:,} (shorten it in server '{m.source.name}')")
    index[public] = Entry(m, original, item.model_copy(update=update))
    if warnings is not None and (why := name_problem(public)):
        fix = f"set {m.config_path}.prefix to something shorter" if m.config_path else "shorten hub.prefix"
        warnings.append(f"{kind} name '{public}' {why}; {fix}")
