"""What the catalog serves of one server's tool: nothing, while its pinned definition has changed (the
drift is noted in ``withheld``), else the tool with hub.json's ``overrides`` applied (and its MCP Apps URIs
mapped, ``apps``)."""

from __future__ import annotations

from typing import Any

import mcp.types as types

from hermes_hub.core.aggregation import apps
from hermes_hub.core.aggregation.pins import Drift
from hermes_hub.infra.call import Identity

Withheld = dict[str, tuple[Any, Drift]]  # public name -> (its ``catalog.Mount``, what changed)


def shaped(mount: Any, tool: types.Tool, withheld: Withheld) -> types.Tool | None:
    """``tool`` of ``mount``'s server as the catalog serves it, or None when its pin withholds it."""
    drift = mount.guard.check(mount.source.name, tool, mount.namespace.name(tool.name)) if mount.guard else None
    if drift is not None:
        withheld[drift.public] = (mount, drift)
        return None
    return apps.with_meta(mount.overrides.apply(tool), mount.namespace)  # MCP Apps' URIs in ``_meta`` mapped


def refusal(withheld: Withheld, name: str, caller: Identity) -> str | None:
    """The tool error for a call of the withheld tool ``name``, if ``caller`` may use it at all."""
    held = withheld.get(name)
    return held[1].message() if held is not None and held[0].offers(held[1].tool, caller) else None
