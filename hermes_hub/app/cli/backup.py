"""``hermes-hub backup FILE`` and ``hermes-hub restore FILE``: the store, copied while the hub serves and
put back while it does not, with the secret key kept apart in ``FILE.key``.

The key seals every stored secret (people's ``${secret:NAME}`` values, OAuth grants). Whoever holds the
store and the key can open them, so they are two files: keep ``FILE.key`` somewhere other than ``FILE``.
A key taken from ``HERMES_SECRET_KEY`` lives in the environment and is never written by either command.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import click

from hermes_hub.app.cli.command import fail
from hermes_hub.infra.errors import ConfigError, HubError

POSTGRES = ("a PostgreSQL store is backed up and restored with pg_dump and pg_restore (see docs/operations.md, "
            "Backups); these commands copy an SQLite store")


def _store(config: str) -> tuple[object, Path, Path]:
    """(the config, the SQLite store's file, the key file beside it)."""
    from hermes_hub.infra.config import load_config
    from hermes_hub.infra.storage import default_url, is_postgres, sqlite_path
    from hermes_hub.services.vault import key_file

    try:
        cfg = load_config(config)
    except ConfigError as e:
        fail(str(e), 2)
    url = cfg.storage.url or default_url()
    if is_postgres(url):
        fail(POSTGRES, 2)
    path = sqlite_path(url, cfg.base_dir)[0]
    return cfg, path, key_file(f"sqlite:///{path}")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {table}" for table, n in counts.items())


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--config", default="hub.json", show_default=True, help="the hub.json whose store to copy")
def backup_cmd(file: Path, config: str) -> None:
    """Copy the hub's store to FILE, consistent to one moment, while the hub may be serving; the secret key
    goes to FILE.key, apart from it."""
    from hermes_hub.infra.storage import snapshot
    from hermes_hub.services.vault import KEY_ENV

    _, store, key = _store(config)
    key_copy = file.with_name(file.name + ".key")
    for taken in (file, key_copy):
        if taken.exists():
            fail(f"{taken} exists; nothing was written. Give a new file name, or move it away")
    try:
        counts = snapshot.take(store, file)
    except HubError as e:
        fail(str(e))
    click.echo(f"backed up {store} to {file} ({_counts(counts)})")
    if os.environ.get(KEY_ENV):
        click.echo(f"the secret key is {KEY_ENV} in the environment: it is in neither file; keep it, or the "
                   f"backup's stored secrets cannot be opened")
    elif key.is_file():
        fd = os.open(key_copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key.read_bytes())
        click.echo(f"the secret key is in {key_copy}, apart from the store: keep it somewhere other than {file} "
                   f"(whoever holds both can open every stored secret)")
    else:
        click.echo("there is no secret key yet (nothing is sealed): the backup is the store alone")


@click.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--config", default="hub.json", show_default=True, help="the hub.json whose store to replace")
def restore_cmd(file: Path, config: str) -> None:
    """Put the backup FILE back as the hub's store (and FILE.key as its secret key), keeping the store it
    replaces aside; refused while a hub serves the store."""
    from hermes_hub.app.serving import presence
    from hermes_hub.infra.storage import snapshot

    cfg, store, key = _store(config)
    with presence.claim(cfg, config) as other:  # held until the swap is done: no hub starts on it meanwhile
        if other is not None:
            where = f" at {other.url}" if other.url else " over stdio"
            fail(f"a hub serves this store now (pid {other.pid or '?'}{where}); stop it, then restore. Nothing was "
                 f"changed")
        try:
            counts, kept = snapshot.put_back(file, store)
        except HubError as e:
            fail(str(e))
        click.echo(f"restored {store} from {file} ({_counts(counts)})")
        if kept is not None:
            click.echo(f"the store it replaced is kept as {kept}")
        _restore_key(file.with_name(file.name + ".key"), key)


def _restore_key(backup: Path, key: Path) -> None:
    if not backup.is_file():
        click.echo(f"no {backup} beside the backup: the stored secrets open only with the key they were sealed "
                   f"with ({key} or HERMES_SECRET_KEY)")
        return
    if key.is_file() and key.read_bytes() == backup.read_bytes():
        click.echo(f"the secret key in {backup} is the one at {key} already")
        return
    if key.is_file():
        aside = key.with_name(f"{key.name}.{int(key.stat().st_mtime)}.bak")
        os.replace(key, aside)
        click.echo(f"the secret key it replaced is kept as {aside}")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f, backup.open("rb") as src:
        shutil.copyfileobj(src, f)
    click.echo(f"the secret key from {backup} is now {key}")
