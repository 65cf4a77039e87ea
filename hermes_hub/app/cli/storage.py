"""``hermes-hub storage migrate``: copy everything from one store to another (SQLite ⇄ PostgreSQL)."""

from __future__ import annotations

import os

import click

from hermes_hub.app.cli.admin import _run
from hermes_hub.infra.errors import StorageError


@click.group()
def storage() -> None:
    """Move the hub's data between databases."""


@storage.command("migrate")
@click.option("--from", "source", required=True, help="e.g. sqlite:///hub.db (relative to the current folder)")
@click.option("--to", "target", required=True, help="e.g. postgresql://user:pass@host:5432/db")
@click.option("--force", is_flag=True, help="empty a target that already holds data, then copy")
def storage_migrate(source: str, target: str, force: bool) -> None:
    """Copy sessions, messages, memories (with their vectors), tokens, audit, jobs and runs from SOURCE
    to TARGET, then check the row count of every table. SOURCE is left as it was."""
    from hermes_hub.infra.storage import open_store
    from hermes_hub.infra.storage.copy import clear, copy_store, is_empty

    source, target = os.path.expandvars(source), os.path.expandvars(target)

    async def go() -> None:
        async with open_store(source) as src, open_store(target) as dst:
            click.echo(f"from {src.url}\nto   {dst.url}")
            if not await is_empty(dst):
                if not force:
                    raise StorageError(f"the target {dst.url} already holds data; nothing was copied. Point --to at "
                                       "an empty database, or add --force to empty it first")
                await clear(dst)
                click.echo("emptied the target (--force)")
            report = await copy_store(src, dst, lambda line: click.echo(f"  {line}"))
            bad = [(t, a, b) for t, a, b in report.counts if a != b]
            if bad:
                raise StorageError("row counts differ after the copy: " + ", ".join(
                    f"{t} {a} in the source, {b} in the target" for t, a, b in bad))
            total = sum(a for _, a, _ in report.counts)
            click.echo(f"copied {total} rows in {len(report.counts)} tables; every count matches")

    _run(go)
