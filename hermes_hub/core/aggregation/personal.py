"""A user's own listing of a ``per_user`` server: what they are listed and routed by, and nobody else.

A ``per_user`` server runs one connection per hub user, with that user's credentials, and what it
lists may name their account (``send_to_acme_payroll___cfo_office``). The catalog's shared index
holds only the lists of its credential-free probe (``Accounts.tools``): that is what other users,
status and ``hub.pin: auto`` see. A user with a READY connection of their own gets an index of their
own, in which that server's part is their connection's lists:

    own = own_lists(catalog.mounts, "ana")       # {mount position: ana's connection}
    index = build(catalog.mounts, own, catalog.withheld)

Their tools are served with hub.json's ``overrides`` and MCP Apps' URIs mapped, but never go to the
pin guard: a pin would store their account's text for everyone (``hub.pin: auto``) and a
drift would hold their definition, which legitimately differs from the probe's. A tool the shared
listing withholds (its pinned definition changed) is withheld from them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp.types as types

from hermes_hub.core.aggregation import apps
from hermes_hub.core.aggregation.listing import Index, build as build_index
from hermes_hub.core.aggregation.mounts import Mount
from hermes_hub.core.aggregation.shaping import Withheld, shaped

MAX_CACHED = 1_000  # users' indexes kept between rebuilds; past it they are built again


def is_per_user(mount: Mount) -> bool:
    return callable(getattr(mount.source, "listing", None))


def own_lists(mounts: Sequence[Mount], user: str) -> dict[int, Any]:
    """Position -> ``user``'s own READY connection, for each ``per_user`` server where they have one."""
    own = {}
    for i, m in enumerate(mounts):
        listing = getattr(m.source, "listing", None)
        if m.source.ready and callable(listing) and (conn := listing(user)) is not None:
            own[i] = conn
    return own


def fingerprint(mounts: Sequence[Mount]) -> int:
    """Changes when a user's own listing of a ``per_user`` server appears, goes, or is listed again."""
    parts = []
    for m in mounts:
        for user, conn in sorted(getattr(m.source, "listings", lambda: {})().items()):
            parts.append((m.source.name, user, id(conn), id(conn.tools), id(conn.resources), id(conn.templates),
                          id(conn.prompts)))
    return hash(tuple(parts))


def build(mounts: Sequence[Mount], own: dict[int, Any], withheld: Withheld) -> Index:
    """The index of a user whose own connections are ``own`` (from ``own_lists``)."""
    position = {id(m): i for i, m in enumerate(mounts)}

    def lists(m: Mount) -> Any:
        return own.get(position[id(m)], m.source if m.source.ready else None)

    def shape(m: Mount, tool: types.Tool, held: Withheld) -> types.Tool | None:
        if position[id(m)] not in own:
            return shaped(m, tool, held)  # the shared lists, as the shared index shapes them
        if m.namespace.name(tool.name) in withheld:
            return None
        return apps.with_meta(m.overrides.apply(tool), m.namespace)

    index = build_index(mounts, lists, shape)
    index.withheld = {**withheld, **index.withheld}
    index.own = dict(own)
    return index
