"""``hermes-hub schedules``: list, pause, resume and delete schedules from the terminal, read an inbox, and
print the webhook secret a receiver checks ``X-Hermes-Signature`` with. Works on the store (a running hub
picks the changes up at its next look), or with ``--url`` through a served hub's ``hermes_schedule_*`` tools
as the user of ``--token``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.admin import CONFIG, _run
from hermes_hub.app.cli.remote import call_own, hub_client, local_only, remote_options

USER = click.option("--user", default=None, help="whose schedules (default: auth.local_user, else your OS user name)")
JSON = click.option("--json", "as_json", is_flag=True, help="print JSON")
GROUP_URL = "hermes_hub.schedules.url"


@asynccontextmanager
async def _book(config: str, user: str | None) -> AsyncIterator[tuple[Any, Any, Any]]:
    from hermes_hub.infra.call import ADMIN, Identity
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.identity import local_user_name
    from hermes_hub.core.schedules import Clock, Schedules
    from hermes_hub.services.sessions import Sessions
    from hermes_hub.infra.storage import open_store

    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        book = Schedules(lambda: store, lambda: cfg, Clock(), Sessions(store).get)
        yield book, Identity((user or cfg.auth.local_user or local_user_name()).strip(), ADMIN), store


def _print(rows: list[dict[str, Any]], as_json: bool, headers: list[str], empty: str) -> None:
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        click.echo(empty)
    else:
        click.echo(tables.table(headers, [[r.get(h) for h in headers] for r in rows]))


def _when(s: dict[str, Any]) -> str:
    from hermes_hub.core.schedules.timing import written

    return next(f"{k} {written(s[k]) if k == 'every' else s[k]}" for k in ("at", "every", "cron") if k in s)


@click.group(invoke_without_command=True)
@USER
@JSON
@remote_options
@CONFIG
@click.pass_context
def schedules(ctx: click.Context, user: str | None, as_json: bool, url: str | None, config: str) -> None:
    """Your schedules with their next and last runs (subcommands change them)."""
    if ctx.invoked_subcommand is not None:
        ctx.meta[GROUP_URL] = url  # `schedules --url U pause ID`: the subcommand asks the same hub
        return
    local_only(url, user=user)

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                found, whose = (await call_own(client, "hermes_schedule_list", {}))["schedules"], "you"
        else:
            async with _book(config, user) as (book, caller, _):
                found, whose = await book.list(caller), caller.user_id
        rows = [{**s, "when": _when(s), "last": (s.get("last_run") or {}).get("state")} for s in found]
        _print(rows, as_json, ["schedule_id", "when", "timezone", "state", "next_run", "last", "task"],
               f"no schedules for {whose}; the agent makes them with hermes_schedule_create")
    _run(go)


def _change(name: str, doc: str, args: dict[str, Any] | None) -> None:
    @schedules.command(name, help=doc)
    @click.argument("schedule_id")
    @USER
    @remote_options
    @CONFIG
    def command(schedule_id: str, user: str | None, url: str | None, config: str) -> None:
        url = url or click.get_current_context().meta.get(GROUP_URL)
        local_only(url, user=user)

        async def go() -> None:
            if url is not None:
                async with hub_client(config, url) as client:
                    tool = "hermes_schedule_delete" if args is None else "hermes_schedule_update"
                    done = await call_own(client, tool, {"schedule_id": schedule_id, **(args or {})})
            else:
                async with _book(config, user) as (book, caller, _):
                    done = await (book.delete(caller, schedule_id) if args is None
                                  else book.update(caller, schedule_id, args))
            if args is None:
                click.echo(f"deleted {schedule_id}")
                return
            click.echo(f"{schedule_id}: {done['state']}" + (f", next run {done['next_run']}" if done["next_run"]
                                                                 else ""))
        _run(go)


_change("pause", "Stop running SCHEDULE_ID until it is resumed.", {"paused": True})
_change("resume", "Run SCHEDULE_ID again (from its next due time).", {"paused": False})
_change("delete", "Delete SCHEDULE_ID and its runs.", None)


@schedules.command("inbox")
@USER
@JSON
@CONFIG
def inbox_cmd(user: str | None, as_json: bool, config: str) -> None:
    """What the schedules' runs answered, newest first (hub://hermes/inbox)."""
    async def go() -> None:
        async with _book(config, user) as (book, caller, _):
            _print(await book.inbox(caller), as_json, ["finished_at", "state", "task", "answer", "error"],
                   f"the inbox of {caller.user_id} is empty")
    _run(go)


@schedules.command("secret")
@CONFIG
def secret_cmd(config: str) -> None:
    """Print the hub's webhook secret (made on first use): receivers check X-Hermes-Signature with it."""
    async def go() -> None:
        from hermes_hub.infra.config import load_config
        from hermes_hub.core.schedules.inbox import hub_secret
        from hermes_hub.services.vault import Vault, load_hub_key

        async with _book(config, None) as (_, _, store):
            cfg = load_config(config)
            click.echo(await hub_secret(Vault(store, load_hub_key(cfg.storage.url, cfg.base_dir))))
    _run(go)
