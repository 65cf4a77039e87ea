"""``hermes-hub install HOST`` puts the hub into an MCP host's config; ``hermes-hub import HOST|PATH`` brings
that host's servers into hub.json, so they run behind the hub (see ``hermes_hub.app.cli.hosts``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hermes_hub.infra.errors import ConfigError, HubError

HOST_NAMES = ["claude-desktop", "cursor", "vscode", "claude-code", "gemini", "qwen", "windsurf", "opencode", "codex"]


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.command("install")
@click.argument("host", type=click.Choice(HOST_NAMES))
@click.option("--name", default="hermes", show_default=True, help="the hub's name among the host's servers")
@click.option("--config", default="hub.json", show_default=True, help="the hub.json the host's hub serves")
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path),
              help="the host's config file (default: its standard place; or set HERMES_<HOST>_CONFIG)")
@click.option("--dry-run", is_flag=True, help="print the change as a diff and write nothing")
def install(host: str, name: str, config: str, file: Path | None, dry_run: bool) -> None:
    """Add the hub (serve --stdio --config HUB_JSON) to HOST's MCP servers, keeping everything else."""
    from hermes_hub.app.cli import hosts, jsonfile, tomlfile
    from hermes_hub.infra.config import load_config

    target = hosts.HOSTS[host]
    try:
        load_config(config)
    except ConfigError as e:
        _fail(f"{e}\nfix it first (`hermes-hub check {config}`); nothing was written", 2)
    path = file or target.path()
    try:
        entry = target.entry(Path(config))
        if target.toml:
            doc, text = tomlfile.read(path)
            servers = tomlfile.servers_of(doc, path)
        else:
            doc, text = hosts.read_json_file(path, f"{target.label}'s config")
            servers = hosts.servers_of(doc or {}, target.key, path)
        existing = servers.get(name)
        if existing is not None and not hosts.runs_a_hub(existing):
            raise hosts.HostFileError(f"{target.label} already has a server '{name}' that is not this hub "
                                      f"({existing.get('command') or existing.get('url')}); choose another --name")
        if existing == entry:
            click.echo(f"'{name}' in {path} is already this hub; nothing changed")
            return
        if target.toml:  # comments, blank lines and order kept
            new_text = tomlfile.with_server(doc, name, entry)
        else:  # in the file's own style
            new_text = jsonfile.render(text, doc, hosts.with_entry(doc, target.key, name, entry), target.key)
        if dry_run:
            click.echo(hosts.diff(text, new_text, path), nl=False)
            click.echo("(dry run: nothing written)", err=True)
            return
        backup = hosts.write_with_backup(path, new_text)
    except HubError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {path}: {e.strerror or e}; nothing was changed")
    click.echo(f"installed '{name}' in {target.label}: {path}" + (f" (backup: {backup})" if backup else ""))
    click.echo(f"restart {target.label} to load it")


@click.command("import")
@click.argument("source", metavar="HOST|PATH")
@click.option("--config", default="hub.json", show_default=True, help="the hub.json to add the servers to")
@click.option("--dry-run", is_flag=True, help="print the change as a diff and write nothing")
def import_cmd(source: str, config: str, dry_run: bool) -> None:
    """Bring the MCP servers of a host's config (or of the JSON or TOML file at PATH) into hub.json."""
    from hermes_hub.app.cli import hosts, jsonfile, tomlfile

    config_path = Path(config)
    try:
        if source in hosts.HOSTS:
            host = hosts.HOSTS[source]
            path, key, label = host.path(), host.key, host.label
        elif Path(source).exists() or "/" in source or source.endswith((".json", ".toml")):
            path, key, label = Path(source), None, source
        else:
            raise hosts.HostFileError(f"'{source}' is neither a host ({', '.join(HOST_NAMES)}) nor a file")
        toml = path.suffix == ".toml"
        if toml:
            doc = tomlfile.read(path)[0]
        else:
            doc = hosts.read_json_object(path, f"{label}'s config" if source in hosts.HOSTS else "the file")
        if doc is None:
            raise hosts.HostFileError(f"{path} does not exist or is empty: there is nothing to import")
        key = key or next((k for k in ("mcpServers", "servers", "mcp", tomlfile.KEY) if k in doc), None)
        if key is None or key not in doc:
            raise hosts.HostFileError(f"{path} has no 'mcpServers' (or VS Code's 'servers', opencode's 'mcp', "
                                      f"Codex's [mcp_servers]): nothing to import")
        if toml:
            servers = {n: tomlfile.in_hub_terms(e) for n, e in tomlfile.servers_of(doc, path).items()}
        else:
            servers = hosts.servers_of(doc, key, path)
        hub_doc, hub_text = hosts.read_json_file(config_path, "hub.json")
        result = hosts.import_servers(hub_doc, servers, str(path))
        for name in result.added:
            click.echo(f"{'would add' if dry_run else 'added'} {name}")
        for name, why in result.skipped:
            click.echo(f"skipped {name}: {why}")
        for name, why in result.clashes:
            click.echo(f"clash {name}: {why}", err=True)
        if not result.added:
            click.echo(f"nothing to add to {config_path}")
            return
        new_text = jsonfile.render(hub_text, hub_doc, result.doc, "mcpServers")  # a diff shows only the added
        if dry_run:
            click.echo(hosts.diff(hub_text, new_text, config_path), nl=False)
            click.echo("(dry run: nothing written)", err=True)
            return
        backup = hosts.write_with_backup(config_path, new_text)
    except HubError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {config_path}: {e.strerror or e}; nothing was changed")
    click.echo(f"wrote {config_path}" + (f" (backup: {backup})" if backup else "")
               + f"; now run `hermes-hub install {source if source in hosts.HOSTS else 'HOST'}` so the host "
                 f"starts the hub in their place, and remove them from the host")
