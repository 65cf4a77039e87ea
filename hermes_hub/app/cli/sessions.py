"""``hermes-hub sessions list|search|show``: your stored sessions, as the ``hermes_session_*`` tools give them.

Every subcommand goes through the hub's own tools, so it shows what a host would see, as the same user: over
``--url`` (or the hub already serving this hub.json) as the token's user; otherwise in a hub built here
without starting any server (sessions need none), as the local user.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.command import async_command, make_target, target_options
from hermes_hub.app.cli.remote import call_own as _call

SNIPPET = 100  # characters of a message a table shows


@asynccontextmanager
async def _host(config: str, url: str | None) -> AsyncIterator[Any]:
    target = make_target(config, url, None, None)
    if target.url is not None:
        from hermes_hub.app.cli.target import connect

        async with connect(target) as (client, _):
            yield client
        return
    from hermes_hub.app.hub import Hub
    from hermes_hub.infra.config import load_config

    cfg = load_config(config)
    hub = Hub(cfg.model_copy(update={"mcp_servers": {}}), config_path=config)  # sessions need no server
    hub.fires = False  # a one-off command runs no schedules
    async with hub, hub.client() as client:  # acting as the local user
        yield client


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _options(fn: Any) -> Any:
    """``--url``/``--token`` and friends, less ``--command`` and ``--direct`` (a raw server has no sessions)."""
    wrapped = target_options(fn)
    wrapped.__click_params__ = [p for p in wrapped.__click_params__ if p.name not in ("command", "direct")]
    return wrapped


@click.group()
def sessions() -> None:
    """List, search and show your stored sessions (as hermes_session_* do for a host)."""


@sessions.command("list")
@click.option("--limit", type=int, default=20, show_default=True)
@_options
@async_command
async def list_cmd(limit: int, config: str, url: str | None, as_json: bool, verbose: bool) -> None:
    """Your sessions, most recently updated first."""
    async with _host(config, url) as client:
        found = await _call(client, "hermes_session_list", {"limit": limit})
    rows = found.get("sessions", [])
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("no sessions yet")
        return
    click.echo(tables.table(["session", "title", "messages", "updated"], [
        [s["session_id"], _one_line(s["title"] or "(untitled)"), str(s["message_count"]), s["updated_at"][:19]]
        for s in rows]))


@sessions.command("search")
@click.argument("query")
@click.option("--limit", type=int, default=20, show_default=True)
@_options
@async_command
async def search_cmd(query: str, limit: int, config: str, url: str | None, as_json: bool, verbose: bool) -> None:
    """Messages of your sessions that match QUERY, best first."""
    async with _host(config, url) as client:
        found = await _call(client, "hermes_session_search", {"query": query, "limit": limit})
    rows = found.get("results", [])
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo(f"no message matches {query!r}")
        return
    click.echo(tables.table(["session", "title", "role", "when", "text"], [
        [r["session_id"], _one_line(r["session_title"] or ""), r["role"], r["created_at"][:19],
         _one_line(r["snippet"].replace("**", ""))] for r in rows]))


@sessions.command("show")
@click.argument("session_id")
@_options
@async_command
async def show_cmd(session_id: str, config: str, url: str | None, as_json: bool, verbose: bool) -> None:
    """SESSION_ID's messages in order, with the tool calls and their results."""
    async with _host(config, url) as client:
        found = await _call(client, "hermes_session_history", {"session_id": session_id})
    messages = found.get("messages", [])
    if as_json:
        click.echo(json.dumps(messages, indent=2, ensure_ascii=False))
        return
    for m in messages:
        head = f"[{m['created_at'][:19]}] {m['role']}"
        if m.get("tool_call_id"):
            head += f" (result of {m['tool_call_id']})"
        if m["content"]:
            click.echo(f"{head}: {m['content']}")
        for call in m.get("tool_calls") or []:
            click.echo(f"{head} calls {call['name']} {json.dumps(call.get('arguments') or {}, ensure_ascii=False)} "
                       f"(id {call['id']})")
    if not messages:
        click.echo("the session has no messages yet")
