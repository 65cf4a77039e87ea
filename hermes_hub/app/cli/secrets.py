"""``hermes-hub secret``: set, list and delete a user's own secrets, the ``${secret:NAME}``s of per_user servers.

A value is read from a prompt that does not echo it (or from stdin when that is not a terminal), never
from the command line, where the shell's history and ``ps`` would keep it; it is sealed in the store
(``hermes_hub.services.vault``) and never printed again. A running hub uses it from the next start of that
user's connection, with no restart.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.admin import CONFIG, _run
from hermes_hub.infra.errors import InvalidInput

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig
    from hermes_hub.services.vault import Vault

USER = click.option("--user", default=None, help="whose secret (default: auth.local_user, else your OS user name)")
MAX_INPUT = 64 * 1024  # hermes_hub.services.vault.MAX_VALUE_BYTES


@asynccontextmanager
async def _vault(config: str) -> AsyncIterator[tuple[Vault, HubConfig]]:
    from hermes_hub.infra.config import load_config
    from hermes_hub.infra.storage import open_store
    from hermes_hub.services.vault import Vault, load_hub_key

    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        yield Vault(store, load_hub_key(cfg.storage.url, cfg.base_dir)), cfg


def _user(cfg: HubConfig, user: str | None) -> str:
    from hermes_hub.services.identity import local_user_name

    return (user or cfg.auth.local_user or local_user_name()).strip()


def _users_of(cfg: HubConfig, name: str) -> list[str]:
    """The servers of ``cfg`` whose env or headers refer to ``${secret:name}``."""
    return [key for key, s in cfg.mcp_servers.items() if name in s.secret_names]


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        value = click.prompt(f"value of secret '{name}' (not shown)", hide_input=True, confirmation_prompt=True,
                             default="", show_default=False)
    else:
        value = sys.stdin.read(MAX_INPUT + 1)
        if len(value) > MAX_INPUT:
            raise InvalidInput(f"the value on stdin is longer than {MAX_INPUT:,} characters; a secret is a token "
                               f"or a password, not a file")
        value = value.rstrip("\r\n")
    if not value.strip():
        raise InvalidInput(f"no value given for secret '{name}': type it at the prompt, or pipe it in "
                           f"(e.g. `hermes-hub secret set {name} < token.txt`)")
    return value


@click.group()
def secret() -> None:
    """Your own secrets for per_user servers (the ${secret:NAME} in their env or headers)."""


@secret.command("set")
@click.argument("name")
@USER
@CONFIG
def secret_set(name: str, user: str | None, config: str) -> None:
    """Set secret NAME for USER, read from a hidden prompt or stdin (never from the command line)."""
    from hermes_hub.infra.config.sections import SECRET_KIND, SECRET_NAME_RE

    async def go() -> None:
        if not SECRET_NAME_RE.match(name):
            raise InvalidInput(f"{name!r} is no secret name: use letters, digits, '_', '.' and '-' (at most 64)")
        async with _vault(config) as (vault, cfg):
            who = _user(cfg, user)
            value = _read_value(name)
            await vault.put(who, SECRET_KIND, name, value)
            servers = _users_of(cfg, name)
        click.echo(f"set secret '{name}' for user '{who}'", err=True)
        if servers:
            click.echo(f"used by {', '.join(servers)} from the next start of {who}'s connection (a running hub "
                       f"included, no restart)", err=True)
        else:
            click.echo(f"note: no server in {config} refers to ${{secret:{name}}} yet", err=True)

    _run(go)


@secret.command("list")
@USER
@click.option("--json", "as_json", is_flag=True)
@CONFIG
def secret_list(user: str | None, as_json: bool, config: str) -> None:
    """List USER's secrets: names and when they were set, never their values."""
    from hermes_hub.infra.config.sections import SECRET_KIND

    async def go() -> None:
        async with _vault(config) as (vault, cfg):
            who = _user(cfg, user)
            rows = await vault.names(who, SECRET_KIND)
            data = [{"name": r.name, "user": r.user_id, "updated_at": r.updated_at.isoformat(),
                     "servers": _users_of(cfg, r.name)} for r in rows]
            wanted = sorted({n for s in cfg.mcp_servers.values() if s.per_user for n in s.secret_names}
                            - {r.name for r in rows})
        if as_json:
            click.echo(json.dumps({"user": who, "secrets": data, "not_set": wanted}, indent=2, ensure_ascii=False))
            return
        click.echo(tables.table(["name", "set at", "used by"],
                                [[d["name"], d["updated_at"][:19], ", ".join(d["servers"])] for d in data]))
        for n in wanted:
            click.echo(f"not set: {n} (servers {', '.join(_users_of(cfg, n))}); set it with "
                       f"`hermes-hub secret set {n}`", err=True)

    _run(go)


@secret.command("delete")
@click.argument("name")
@USER
@CONFIG
def secret_delete(name: str, user: str | None, config: str) -> None:
    """Delete USER's secret NAME (a connection already running keeps what it started with until it stops)."""
    from hermes_hub.infra.config.sections import SECRET_KIND

    async def go() -> None:
        async with _vault(config) as (vault, cfg):
            who = _user(cfg, user)
            if not await vault.delete(who, SECRET_KIND, name):
                raise InvalidInput(f"user '{who}' has no secret '{name}'; see `hermes-hub secret list`")
        click.echo(f"deleted secret '{name}' of user '{who}'", err=True)

    _run(go)
