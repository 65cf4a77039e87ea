"""``hermes-hub login NAME`` and ``logout NAME``: sign the hub in to an OAuth-protected server, or forget it.

``login`` runs the authorization-code flow with a loopback callback (127.0.0.1, a free port): it prints
the authorization URL and opens it with Python's ``webbrowser`` (which honours ``$BROWSER``), waits a
bounded time for the redirect, and stores the grant sealed in the hub's store. A running hub using the
same store picks it up within seconds. ``--user USER`` stores USER's own grant (servers with
``per_user``); without it the grant is the hub's, shared by every user.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import anyio
import click

from hermes_hub.app.cli.command import async_command, fail, load_config, setup_logging

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig, ServerConfig
    from hermes_hub.downstream.grants import Grants

CONFIG = click.option("--config", default="hub.json", show_default=True, help="hub.json naming the server and the store")
USER = click.option("--user", default=None, help="whose grant: this hub user's own (default: the hub's, shared)")


def _server(cfg: HubConfig, name: str) -> ServerConfig:
    if name not in cfg.mcp_servers:
        known = ", ".join(n for n, s in sorted(cfg.mcp_servers.items()) if s.transport != "stdio") or "none"
        fail(f"no server '{name}' in mcpServers (remote servers: {known})", 2)
    return cfg.mcp_servers[name]


@asynccontextmanager
async def _grants(cfg: HubConfig) -> AsyncIterator[Grants]:
    from hermes_hub.downstream.grants import Grants
    from hermes_hub.services.vault import load_hub_key
    from hermes_hub.infra.storage import open_store
    from hermes_hub.services.vault import Vault

    key = load_hub_key(cfg.storage.url, cfg.base_dir)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        vault = Vault(store, key)
        yield Grants(lambda: vault)


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser: the printed URL is the way
        pass


@click.command()
@click.argument("name")
@CONFIG
@USER
@click.option("--timeout", default=300.0, show_default=True, help="seconds to wait for the browser to come back")
@click.option("-v", "--verbose", is_flag=True, help="log what the sign-in does")
@async_command
async def login(name: str, config: str, user: str | None, timeout: float, verbose: bool) -> None:
    """Sign the hub in to the OAuth-protected server NAME (in a browser) and store the grant."""
    from hermes_hub.downstream.loopback import Loopback
    from hermes_hub.downstream.signin import sign_in

    setup_logging(verbose)
    cfg = load_config(config)
    server = _server(cfg, name)
    async with _grants(cfg) as grants, Loopback(name) as callback:

        async def show(url: str) -> None:
            callback.expect(parse_qs(urlsplit(url).query).get("state", [None])[0])
            click.echo(f"Sign in to {name} in your browser; if it does not open, visit:\n\n  {url}\n", err=True)
            await anyio.to_thread.run_sync(_open_browser, url, abandon_on_cancel=True)

        async def came_back():  # type: ignore[no-untyped-def]
            return await callback.wait(timeout)

        done = await sign_in(grants, name, server, user_id=user or "", redirect_uri=callback.redirect_uri,
                             open_url=show, wait_code=came_back, patience=timeout)
    whose = f"user '{user}'" if user else "the hub (shared by every user)"
    click.echo(f"Signed in to {name} for {whose}; the grant is stored in {_where(cfg)}.")
    if done.tools is not None:
        click.echo(f"{name} lists {done.tools} tools with it; a running hub on this store picks it up within seconds.")
    else:
        click.echo(f"warning: the grant is stored, but a handshake with {name} failed: {done.check_error}", err=True)
        sys.exit(1)


@click.command()
@click.argument("name")
@CONFIG
@USER
@async_command
async def logout(name: str, config: str, user: str | None) -> None:
    """Forget the hub's OAuth grant for server NAME (a running hub asks for a new sign-in)."""
    setup_logging(False)
    cfg = load_config(config)
    async with _grants(cfg) as grants:
        gone = await grants.forget(user or "", name)
    whose = f"user '{user}'" if user else "the hub"
    if not gone:
        fail(f"no grant for server '{name}' of {whose} in {_where(cfg)}; nothing to forget", 1)
    click.echo(f"Forgot {whose}'s grant for {name}. Its tokens stay valid at the server until they expire or "
               f"are revoked there.")


def _where(cfg: HubConfig) -> str:
    from hermes_hub.infra.storage import is_postgres

    return "the PostgreSQL store" if is_postgres(cfg.storage.url) else "the hub's SQLite store"
