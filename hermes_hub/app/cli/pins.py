"""``hermes-hub tools pin``, ``tools approve``, ``tools --drift`` and ``tools --show``: pinned tool definitions
and hub.json's overrides, seen from the command line.

``pin`` starts the config's servers in-process (as ``hermes-hub tools`` does) and records each tool's definition
as its server sends it in the config's store; ``approve NAME --digest D`` works on the store alone: it pins the
changed definition a hub saw (and ``tools --drift`` showed with its digest D) only while it is still the one of
digest D, in one conditional write, and a running hub serves the tool again within ``guard.POLL_SECONDS``.
``--drift`` and ``--show`` read a target like every listing command.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import click

from hermes_hub.app.cli.command import async_command, connect, fail, load_config, make_target, setup_logging
from hermes_hub.infra.errors import HubError

DIGEST = re.compile(r"v2:[0-9a-f]{64}")  # what `tools --drift` prints (``aggregation.pins.digest``)
DRIFT_EXIT = 3  # `tools --drift`: some pinned tool is withheld (like `servers` when one is not READY)
CONFIG = click.option("--config", default="hub.json", show_default=True, help="hub.json naming the servers and storage.url")


@click.command("pin")
@click.argument("server", required=False)
@CONFIG
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.option("-v", "--verbose", is_flag=True, help="log what the hub and its servers do")
@async_command
async def pin(server: str | None, config: str, as_json: bool, verbose: bool) -> None:
    """Pin the definition of each tool of SERVER (default: every server) as the server sends it now.

    A tool pinned already keeps its pin; one whose definition changed since is reported (accept the change
    with `hermes-hub tools approve`)."""
    from hermes_hub.core.aggregation.pins import pinned, upgrade
    from hermes_hub.infra.storage.records import PinRecord, utcnow

    setup_logging(verbose)
    async with connect(make_target(config, None, None, None, discover=False)) as (_, hub):
        conns = hub.pool.connections
        if server is not None and server not in conns:
            raise HubError(f"no running server '{server}' in {config}; servers: {', '.join(sorted(conns)) or 'none'}")
        known = {(p.server, p.tool): p for p in await hub.store.list_pins(server)}
        report: dict[str, Any] = {"pinned": [], "already": [], "changed": [], "not_ready": []}
        new, upgraded = [], []
        for name in [server] if server else sorted(conns):
            conn = conns[name]
            if not conn.ready:
                report["not_ready"].append({"server": name, "state": conn.describe_state()})
                continue
            for tool in conn.tools:
                now, now_digest = pinned(tool)
                old = known.get((name, tool.name))
                if old is not None and upgrade(old.digest, tool):  # a legacy pin that holds: pinned over every field
                    upgraded.append((old.digest, PinRecord(name, tool.name, now_digest, now, old.pinned_at,
                                                           old.pinned_by)))
                    old = upgraded[-1][1]
                kind = "pinned" if old is None else "already" if old.digest == now_digest else "changed"
                report[kind].append({"server": name, "tool": tool.name, "name": _public(hub, name, tool.name)})
                if old is None:
                    new.append(PinRecord(name, tool.name, now_digest, now, utcnow(), hub.local.user_id))
        await hub.store.upgrade_pins(upgraded)
        await hub.store.add_pins(new)
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    click.echo(f"pinned {len(report['pinned'])} tool definition(s); {len(report['already'])} were pinned already")
    for c in report["changed"]:
        click.echo(f"warning: '{c['name']}' changed since it was pinned: see `hermes-hub tools --drift`, accept it "
                   f"with the `hermes-hub tools approve {c['name']} --digest …` it prints", err=True)
    for n in report["not_ready"]:
        click.echo(f"warning: server '{n['server']}' is {n['state']}: its tools were not pinned", err=True)


def _public(hub: Any, server: str, tool: str) -> str:
    return next((m.namespace.name(tool) for m in hub.catalog.mounts if m.source.name == server), tool)


@click.command("approve")
@click.argument("name")
@click.option("--digest", "digests", multiple=True, metavar="DIGEST",
              help="the digest `hermes-hub tools --drift` printed for the definition you reviewed (required; repeat it "
                   "to approve several tools of server NAME)")
@CONFIG
@async_command
async def approve(name: str, digests: tuple[str, ...], config: str) -> None:
    """Accept the changed definition of tool NAME (its public name), or of changed tools of server NAME, that you
    reviewed: the one of the digest `hermes-hub tools --drift` printed.

    A definition the server changed again since (its digest differs) is refused and nothing of it is pinned;
    a running hub serves an approved tool again within seconds, without a restart."""
    from hermes_hub.core.aggregation.namespace import Namespace
    from hermes_hub.services.identity import local_user_name
    from hermes_hub.infra.storage import open_store
    from hermes_hub.infra.storage.records import utcnow

    cfg = load_config(config)
    who = cfg.auth.local_user or local_user_name()
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        waiting = [p for p in await store.list_pins() if p.seen_digest is not None]

        def public(server: str, tool: str) -> str:
            prefix = cfg.prefix_of(server) if server in cfg.mcp_servers else server
            return Namespace(prefix, cfg.hub.separator).name(tool)

        is_server = name in cfg.mcp_servers
        targets = [p for p in waiting if (p.server == name if is_server else public(p.server, p.tool) == name)]
        if not targets:
            what = f"server '{name}'" if is_server else f"'{name}'"
            pending = ", ".join(public(p.server, p.tool) for p in waiting) or "none"
            raise HubError(f"no changed definition of {what} is waiting for approval (waiting: {pending}); a hub "
                           f"records one when it withholds a tool: `hermes-hub tools --drift` shows them")
        _check_digests(name, digests)
        approved: dict[tuple[str, str], Any] = {}
        for server, tool in sorted({(p.server, None if is_server else p.tool) for p in targets}):
            for p in await store.approve_pins(server, tool, digests=digests, by=who, at=utcnow()):
                approved[(p.server, p.tool)] = p
    for old in targets:
        if (p := approved.get((old.server, old.tool))) is not None:
            click.echo(f"approved '{public(p.server, p.tool)}' ({_fields(old, p)} changed), now pinned as {p.digest}; "
                       f"a running hub serves it again within seconds")
    refused = [public(p.server, p.tool) for p in targets if (p.server, p.tool) not in approved]
    if refused:
        fail(f"not approved: {', '.join(refused)}. The definition waiting for approval is not the one of the digest "
             f"given (its server changed it again since `hermes-hub tools --drift` showed it, or the digest is another "
             f"tool's), so nothing of it was pinned and it stays withheld. Review it again with "
             f"`hermes-hub tools --drift` and approve the digest it prints")


def _check_digests(name: str, digests: tuple[str, ...]) -> None:
    """Refuse an approve that names no digest, or a digest `tools --drift` cannot have printed."""
    from hermes_hub.core.aggregation.pins import VERSION

    if not digests:
        raise HubError(f"approve pins only a definition you reviewed: run `hermes-hub tools --drift`, read the diff "
                       f"and give the digest it prints, as in `hermes-hub tools approve {name} --digest {VERSION}…`. "
                       f"Nothing was pinned")
    bad = [d for d in digests if not DIGEST.fullmatch(d)]
    if bad:
        raise HubError(f"'{bad[0][:80]}' is not a digest `hermes-hub tools --drift` prints ({VERSION} and 64 hex "
                       f"digits); copy it from there. Nothing was pinned")


def _fields(old: Any, new: Any) -> str:
    from hermes_hub.core.aggregation.pins import FIELDS, LEGACY_FIELDS, changed_fields, is_legacy

    fields = LEGACY_FIELDS if is_legacy(old.digest) else FIELDS
    return ", ".join(changed_fields(old.definition, new.definition, fields)) or "definition"


def finish(outcome: int | str | None) -> None:
    """End ``tools --drift`` or ``--show`` (after the target is closed): an exit status, or an error to show."""
    if isinstance(outcome, str):
        fail(outcome)
    if outcome:
        sys.exit(outcome)


async def show_drift(client: Any, hub: Any, as_json: bool) -> int:
    """``tools --drift``: each withheld tool, what changed and the diff; the exit status (3: there is one)."""
    drift = await _status(client, hub)
    if as_json:
        click.echo(json.dumps(drift, indent=2, ensure_ascii=False))
    elif not drift:
        click.echo("no pinned tool has changed: nothing is withheld")
    for d in [] if as_json else drift:
        click.echo(f"{d['name']} (server '{d['server']}', tool '{d['tool']}'): withheld, {', '.join(d['changed'])} "
                   f"changed since it was pinned {d['pinned_at'][:19]} by {d['pinned_by']}")
        for line in d["diff"]:
            click.echo(f"  {line}")
        click.echo(f"  digest of this definition: {d['digest']}")
        click.echo(f"  accept it: {d['approve']}")
    return DRIFT_EXIT if drift else 0


async def _status(client: Any, hub: Any) -> list[dict[str, Any]]:
    from hermes_hub.app.cli import tables

    if hub is not None:
        return hub.status(hub.local)["drift"]
    tool = tables.status_tool((await client.list_tools()).tools)
    if tool is None:
        raise HubError("this target is not a hermes hub (it has no hub_status tool), so nothing is pinned there")
    result = await client.call_tool(tool, {})
    return (result.structured_content or json.loads(tables.result_text(result))).get("drift", [])


def show_tool(name: str, items: list[Any], hub: Any, as_json: bool) -> str | None:
    """``tools --show NAME``: the tool as served, each field hub.json overrides beside the server's own."""
    from hermes_hub.core.aggregation.overrides import changes
    from hermes_hub.core.aggregation.suggestions import did_you_mean
    from hermes_hub.app.cli import tables

    served = next((t for t in items if t.name == name), None)
    if served is None:
        held = hub.catalog.withheld.get(name) if hub is not None else None
        if held is not None:
            return str(held[1].message())
        return f"no tool '{name}'; {did_you_mean(name, [t.name for t in items])}`hermes-hub tools` lists the names"
    original, server, tool = None, tables.origin(served), served.name
    if hub is not None and (entry := hub.catalog.tools.get(name)) is not None:
        tool = entry.original
        original = next((t for t in getattr(entry.mount.source, "tools", []) if t.name == tool), None)
    changed = changes(original, served) if original is not None else {}
    if hub is None:  # over a URL: the hub's origin meta names the server's tool and its overridden values
        origin = (served.meta or {}).get(tables.ORIGIN) or {}
        tool = origin.get("name", tool)
        changed = {k: (before, _served_value(served, k)) for k, before in (origin.get("overridden") or {}).items()}
        original = served if origin else None
    if as_json:
        click.echo(json.dumps({"name": name, "server": server, "tool": tool,
                               "served": served.model_dump(by_alias=True, exclude_none=True, mode="json"),
                               "overridden": {k: {"server": a, "served": b} for k, (a, b) in changed.items()}},
                              indent=2, ensure_ascii=False))
        return None
    click.echo(f"{name}  (server '{server}', its tool '{tool}')")
    for field, value in (("title", served.title), ("description", served.description), ("annotations", _json(
            served.annotations.model_dump(by_alias=True, exclude_none=True) if served.annotations else None))):
        click.echo(f"{field}: {value if value is not None else '-'}")
        if field in changed:
            before = changed[field][0]
            click.echo(f"  overridden in hub.json; the server's: {_json(before) if field == 'annotations' else before or '-'}")
    click.echo(f"inputSchema: {_json(served.input_schema)}")
    if served.output_schema:
        click.echo(f"outputSchema: {_json(served.output_schema)}")
    if original is None and hub is None:
        click.echo("(the server's own values are shown against the config: run without --url or --command)")
    return None


def _served_value(tool: Any, field: str) -> Any:
    value = getattr(tool, field)
    return value.model_dump(by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else value


def _json(value: Any) -> str:
    return "-" if value is None else json.dumps(value, ensure_ascii=False)
