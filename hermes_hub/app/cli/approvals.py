"""``hermes-hub approve ID``, ``deny ID``, ``approvals`` and ``approvals show ID``: read and answer the calls
waiting for a person's yes (``guards.approve``), from a terminal, through the store every replica shares.

The waiting hub sees the answer within ``approvals.POLL_SECONDS``. Only the caller an approval is for may
answer it: the command answers as the owner of ``--token`` (or ``$HERMES_TOKEN``; a token of hub.json or
the store), else as the hub's local user, the identity of its stdio callers. Anyone else's approval id is
answered "not found", like one that never existed; every decision is an audit row. ``approvals`` shows
every argument shortened (``pipeline.preview``), ``approvals show`` the whole call (an admin: anyone's).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import click

from hermes_hub.app.cli.command import async_command, load_config
from hermes_hub.infra.errors import HubError

if TYPE_CHECKING:
    from hermes_hub.infra.call import Identity
    from hermes_hub.core.pipeline.approvals import Approvals

CONFIG = click.option("--config", default="hub.json", show_default=True, help="hub.json naming storage.url")
TOKEN = click.option("--token", envvar="HERMES_TOKEN", default=None,
                     help="answer as this token's owner (default: the hub's local user) [env HERMES_TOKEN]")


@asynccontextmanager
async def _book(config: str, token: str | None) -> AsyncIterator[tuple[Approvals, Identity]]:
    from hermes_hub.services import audit
    from hermes_hub.infra.call import ADMIN, Identity
    from hermes_hub.services.identity import Authenticator, StaticToken, local_user_name
    from hermes_hub.core.pipeline.approvals import Approvals
    from hermes_hub.core.pipeline.mask import stored_masker
    from hermes_hub.infra.storage import open_store

    cfg = load_config(config)
    masker = stored_masker(cfg)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        if token:
            static = [StaticToken(t.token, t.user, t.role) for t in cfg.auth.tokens]
            who = await Authenticator(store, static).identify(token.strip())
            if who is None:
                raise HubError("that token is not valid (or was revoked); pass one of your own with --token, or "
                               "leave it out to answer as the hub's local user")
        else:
            who = Identity(cfg.auth.local_user or local_user_name(), ADMIN)

        def auditor(caller: Identity, action: str, arguments: dict[str, Any]) -> Any:
            return audit.record(store, user_id=caller.user_id, tool=action, arguments=arguments, masker=masker)

        yield Approvals(lambda: store, auditor, masker), who


async def _answer(approval_id: str, config: str, token: str | None, approve: bool, as_json: bool) -> None:
    from hermes_hub.core.pipeline.preview import Preview

    async with _book(config, token) as (book, who):
        decided = await book.decide(approval_id, who, approve=approve, via="cli")
    if as_json:
        click.echo(json.dumps({"approval": decided.id, "state": decided.state, "tool": decided.tool}))
    else:
        click.echo(f"{decided.state}: {decided.tool} {Preview.of_json(decided.preview).text()} ({decided.id})")


@click.command("approve")
@click.argument("approval_id")
@CONFIG
@TOKEN
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@async_command
async def approve_cmd(approval_id: str, config: str, token: str | None, as_json: bool) -> None:
    """Let the call waiting for APPROVAL_ID run (your own approvals only; `hermes-hub approvals` lists them)."""
    await _answer(approval_id, config, token, True, as_json)


@click.command("deny")
@click.argument("approval_id")
@CONFIG
@TOKEN
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@async_command
async def deny_cmd(approval_id: str, config: str, token: str | None, as_json: bool) -> None:
    """Refuse the call waiting for APPROVAL_ID; its caller is told the person declined."""
    await _answer(approval_id, config, token, False, as_json)


@click.group("approvals", invoke_without_command=True)
@CONFIG
@TOKEN
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.pass_context
def approvals_cmd(ctx: click.Context, config: str, token: str | None, as_json: bool) -> None:
    """List your calls waiting for approval, newest first, every argument shortened; `approvals show ID`
    prints one call whole."""
    if ctx.invoked_subcommand is None:
        _list(config, token, as_json)


@async_command
async def _list(config: str, token: str | None, as_json: bool) -> None:
    from hermes_hub.core.pipeline.preview import Preview

    async with _book(config, token) as (book, who):
        waiting = await book.pending(who)
    if as_json:
        click.echo(json.dumps([{"approval": r.id, "tool": r.tool, "arguments": Preview.of_json(r.preview).lines(),
                                "expires_at": r.expires_at.isoformat()} for r in waiting]))
        return
    if not waiting:
        click.echo(f"no call of {who.user_id}'s is waiting for approval")
    for r in waiting:
        click.echo(f"{r.id}  {r.tool}  expires {r.expires_at.isoformat()[:19]} UTC  "
                   f"(whole call: hermes-hub approvals show {r.id})")
        for line in Preview.of_json(r.preview).lines():
            click.echo(f"    {line}")


@approvals_cmd.command("show")
@click.argument("approval_id")
@CONFIG
@TOKEN
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@async_command
async def show_cmd(approval_id: str, config: str, token: str | None, as_json: bool) -> None:
    """Print the whole call APPROVAL_ID asks a yes for: every argument in full, secrets masked (your own
    approvals; an admin's token, or the hub's local user, reads anyone's)."""
    from hermes_hub.infra.call import ADMIN

    async with _book(config, token) as (book, who):
        record = await book.seen_by(approval_id, who, admin=who.role == ADMIN)
    try:
        arguments: object = json.loads(record.preview)
    except ValueError:  # a row kept before whole calls were: its cut preview
        arguments = record.preview
    if as_json:
        click.echo(json.dumps({"approval": record.id, "tool": record.tool, "server": record.server,
                               "user": record.user_id, "state": record.state, "arguments": arguments,
                               "expires_at": record.expires_at.isoformat()}, ensure_ascii=False))
        return
    click.echo(f"{record.id}: {record.tool} (server {record.server}) for {record.user_id}, {record.state}, "
               f"expires {record.expires_at.isoformat()[:19]} UTC", err=True)
    click.echo(json.dumps(arguments, ensure_ascii=False, indent=2))
