"""The hub's own tools as a command reaches them: over ``--url`` (``HERMES_URL``) with ``--token``
(``HERMES_TOKEN``) as the token's user, the way a host would call them.

    @remote_options            # adds --url and --token to a command that otherwise works on the store
    async with hub_client(config, url) as client:
        rows = await call_own(client, "hermes_memory_list", {"limit": 20})
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import click

from hermes_hub.app.cli.command import TOKEN_KEY, fail, keep_token, make_target, running_hub
from hermes_hub.infra.errors import HubError

URL_HELP = ("ask the hub serving at this streamable HTTP URL (http://HOST:PORT/mcp) through its own tools, as "
            "the token's user, instead of opening the store here")


def remote_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--url`` (a value, or None for the local store) and ``--token`` (kept aside, never an argument)."""
    fn = click.option("--token", envvar="HERMES_TOKEN", show_envvar=True, expose_value=False, callback=keep_token,
                      help="bearer token for --url, when the hub has tokens (`hermes-hub token create USER`)")(fn)
    return click.option("--url", envvar="HERMES_URL", show_envvar=True, help=URL_HELP)(fn)


def local_only(url: str | None, **given: Any) -> None:
    """Options that pick among the store's users or read its key: refused over --url, which acts as one user."""
    named = [f"--{k.replace('_', '-')}" for k, v in given.items() if v]
    if url is not None and named:
        fail(f"{', '.join(named)} reads the hub's store on this machine; over --url you are the token's user, "
             "so leave it out (or drop --url to work on the local store)", 2)


def served(config: str, url: str | None, **local: Any) -> str | None:
    """``url``; without one, the URL of the hub already serving ``config`` (said in one line), so a command
    answers from the running hub instead of opening the store and the embedder here. None (work on the local
    store) when none serves it, or when an option that picks among the store's users (``local``) is given."""
    if url is not None or any(local.values()):
        return url
    ctx = click.get_current_context(silent=True)
    token = ctx.meta.get(TOKEN_KEY, (None, None))[0] if ctx else None
    flags = " ".join(f"--{k.replace('_', '-')}" for k in local)
    return running_hub(config, token, otherwise=f"{flags} works on the store here" if flags else "")


@asynccontextmanager
async def hub_client(config: str, url: str | None, *, discover: bool = False) -> AsyncIterator[Any]:
    """An MCP client of the hub at ``url`` (or, with ``discover``, of the hub serving ``config``)."""
    from hermes_hub.app.cli.target import connect

    target = make_target(config, url, None, None, discover=discover)
    async with connect(target) as (client, _):
        yield client


async def call_own(client: Any, tool: str, args: dict[str, Any]) -> Any:
    """``tool``'s structured answer; its text when it has none; a HubError saying what it answered on error."""
    from mcp import MCPError

    try:
        result = await client.call_tool(tool, args)
    except MCPError as e:  # refused before it ran: most often a tool this token's user may not use
        unknown = "unknown tool" in e.error.message
        raise HubError(f"the hub does not offer {tool} to this token's user" + (
            " (admins only, or a hub of an older release)" if unknown else f": {e.error.message}")) from None
    text = " ".join(getattr(c, "text", "") for c in result.content).strip()
    if result.is_error:
        raise HubError(text or f"{tool} failed")
    return result.structured_content if result.structured_content is not None else text
