"""``hermes-hub memory``: read and tend long-term memory from the terminal, on the hub's store.

Whoever can run this can read the store's file, so ``--user`` picks any user (default: the local
user, as stdio callers are). The store and the embedder load only when a command runs. With ``--url``
(``HERMES_URL``), recall, list, forget and export go through the served hub's ``hermes_memory_*`` tools
instead, as the user of ``--token``: for a hub on another machine. Without ``--url`` or ``--user``, those
four ask the hub already serving ``--config`` when there is one, and say so.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.admin import CONFIG, _run
from hermes_hub.infra.errors import HubError
from hermes_hub.app.cli.remote import call_own, hub_client, local_only, remote_options, served

if TYPE_CHECKING:
    from hermes_hub.services.memory import Memories

USER = click.option("--user", help="whose memory (default: the local user, auth.local_user or the OS user)")


@asynccontextmanager
async def _memories(config: str, user: str | None) -> AsyncIterator[tuple[Memories, str]]:
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.identity import local_user_name
    from hermes_hub.services.memory import Memories
    from hermes_hub.infra.storage import open_store

    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        yield Memories(store, cfg.memory), user or cfg.auth.local_user or local_user_name()


@click.group()
def memory() -> None:
    """Recall, list, forget, export, archive and reindex long-term memories."""


@memory.command("recall")
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True)
@click.option("--sources", type=click.Choice(["memories", "sessions", "both"]), default="both", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@USER
@remote_options
@CONFIG
def recall_cmd(query: str, limit: int, sources: str, as_json: bool, user: str | None, url: str | None,
               config: str) -> None:
    """Search memories and past conversations with QUERY, best first."""
    local_only(url, user=user)
    url = served(config, url, user=user)

    async def go() -> None:
        import anyio

        chosen = ("memories", "sessions") if sources == "both" else (sources,)
        if url is not None:
            async with hub_client(config, url) as client:
                result = await client.call_tool("hermes_memory_recall", {"query": query, "limit": limit,
                                                                         "sources": list(chosen)})
            text = " ".join(getattr(c, "text", "") for c in result.content)
            if result.is_error:
                raise HubError(text.strip() or "hermes_memory_recall failed")
            click.echo(json.dumps((result.structured_content or {}).get("items", []), indent=2, ensure_ascii=False)
                       if as_json else text)
            return
        from hermes_hub.core.builtins.memory_tools import render  # here only: the store's path needs them
        from hermes_hub.services.memory import RecallQuery

        async with _memories(config, user) as (memories, uid):
            with anyio.move_on_after(30):  # a one-shot recall first indexes what earlier commands left unindexed
                await memories.indexer.drain()  # here: no indexing loop runs in a one-shot command
            items = await memories.recall(uid, RecallQuery(query, limit=limit, sources=chosen))
        if as_json:
            click.echo(json.dumps([i.model_dump(mode="json", exclude_none=True) for i in items], indent=2,
                                  ensure_ascii=False))
        else:
            click.echo(render(items))

    _run(go)


@memory.command("list")
@click.option("--state", type=click.Choice(["active", "archived"]))
@click.option("--kind")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@USER
@remote_options
@CONFIG
def list_cmd(state: str | None, kind: str | None, limit: int, as_json: bool, user: str | None, url: str | None,
             config: str) -> None:
    """List memories, newest first."""
    local_only(url, user=user)
    url = served(config, url, user=user)

    async def go() -> None:
        if url is not None:
            args = {"limit": limit, **({"state": state} if state else {}), **({"kind": kind} if kind else {})}
            async with hub_client(config, url) as client:
                page = await call_own(client, "hermes_memory_list", args)
        else:
            async with _memories(config, user) as (memories, uid):
                page = await memories.listing(uid, state=state, kind=kind, limit=limit)
        rows: list[dict[str, Any]] = page["memories"]
        if as_json:
            click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        click.echo(tables.table(["id", "kind", "state", "created", "text"],
                                [[m["memory_id"], m["kind"], m["state"] + (" (superseded)" if m["superseded_by"] else ""),
                                  m["created_at"][:10], m["text"]] for m in rows]))

    _run(go)


@memory.command("forget")
@click.argument("memory_id")
@USER
@remote_options
@CONFIG
def forget_cmd(memory_id: str, user: str | None, url: str | None, config: str) -> None:
    """Forget MEMORY_ID everywhere it is kept."""
    local_only(url, user=user)
    url = served(config, url, user=user)

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                await call_own(client, "hermes_memory_forget", {"memory_id": memory_id})
        else:
            async with _memories(config, user) as (memories, uid):
                await memories.forget(uid, memory_id)
        click.echo(f"forgot {memory_id}")

    _run(go)


@memory.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]), default="markdown", show_default=True)
@USER
@remote_options
@CONFIG
def export_cmd(fmt: str, user: str | None, url: str | None, config: str) -> None:
    """Print every memory of the user as Markdown or JSON."""
    local_only(url, user=user)
    url = served(config, url, user=user)

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                click.echo(await call_own(client, "hermes_memory_export", {"format": fmt}))
            return
        async with _memories(config, user) as (memories, uid):
            click.echo(await memories.export(uid, fmt))

    _run(go)


@memory.command("archive")
@CONFIG
def archive_cmd(config: str) -> None:
    """Archive every user's memories not recalled for memory.archive_after_days, now."""

    async def go() -> None:
        async with _memories(config, None) as (memories, _):
            n = await memories.archive_idle()
        click.echo(f"archived {n} memories not recalled for {memories.cfg.archive_after_days:g} days")

    _run(go)


@memory.command("reindex")
@CONFIG
def reindex_cmd(config: str) -> None:
    """Rebuild the text index and the vectors of every memory and message (after changing memory.embedder)."""

    async def go() -> None:
        async with _memories(config, None) as (memories, _):
            dropped = await memories.reset_index()
            click.echo(f"dropped {', '.join(dropped) or 'no vector tables'}; indexing with "
                       f"{memories.embedder.name if memories.embedder else 'no embedder (lexical only)'}…", err=True)
            await memories.indexer.drain()
            left = await memories.indexer.pending()
        click.echo(f"reindexed; pending: {json.dumps(left)}")

    _run(go)
