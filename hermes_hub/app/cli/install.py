"""``hermes-hub install HOST`` puts the hub into an MCP host's config; ``hermes-hub import HOST|PATH`` brings
that host's servers into hub.json, so they run behind the hub (see ``hermes_hub.app.cli.hosts``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from hermes_hub.infra.errors import ConfigError, HubError

HOST_NAMES = ["claude-desktop", "cursor", "vscode", "claude-code", "gemini", "qwen", "windsurf", "opencode", "codex",
              "copilot", "zed"]
TOKEN_ENV_RE = r"[A-Za-z_][A-Za-z0-9_]{0,100}"


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
@click.option("--url", help="add the hub served at this URL (http://HOST:PORT/mcp) instead of a stdio entry")
@click.option("--token-env", metavar="VAR", help="with --url: the environment variable the host reads the hub's "
                                                 "token from (the file names it, never holds the token)")
@click.option("--token", help="with --url: the hub's token itself, written into the host's file")
def install(host: str, name: str, config: str, file: Path | None, dry_run: bool, url: str | None,
            token_env: str | None, token: str | None) -> None:
    """Add the hub (serve --stdio --config HUB_JSON, or the hub at --url) to HOST's MCP servers, keeping
    everything else."""
    from hermes_hub.app.cli import hosts, jsonfile, tomlfile

    target = hosts.HOSTS[host]
    path = file or target.path()
    try:
        entry = _entry(target, config, url, token_env, token)
        if target.toml:
            doc, text = tomlfile.read(path)
            servers = tomlfile.servers_of(doc, path)
        else:
            doc, text = hosts.read_json_file(path, f"{target.label}'s config", target.comments)
            servers = hosts.servers_of(doc or {}, target.key, path)
        existing = servers.get(name)
        same_url = url is not None and isinstance(existing, dict) and url in (existing.get(k) for k in
                                                                               ("url", *hosts.URL_KEYS))
        if existing is not None and not hosts.runs_a_hub(existing) and not same_url:
            raise hosts.HostFileError(f"{target.label} already has a server '{name}' that is not this hub "
                                      f"({existing.get('command') or existing.get('url')}); choose another --name")
        if existing == entry:
            click.echo(f"'{name}' in {path} is already this hub; nothing changed")
            return
        if target.toml:  # comments, blank lines and order kept
            new_text = tomlfile.with_server(doc, name, entry)
        else:  # in the file's own style
            try:
                new_text = jsonfile.render(text, doc, hosts.with_entry(doc, target.key, name, entry), target.key,
                                           target.comments)
            except jsonfile.Uncommented:
                raise hosts.HostFileError(f"{path} has comments, which a rewrite would lose: remove its '{name}' "
                                          f"entry by hand, then run this again. Nothing was written.") from None
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
    if token is not None:
        click.echo(f"note: {path} now holds the hub's token; keep it private (or use --token-env VAR)", err=True)
    elif token_env is not None:
        click.echo(f"set {token_env} to the hub's token where {target.label} runs")
    click.echo(f"restart {target.label} to load it")


def _entry(target: Any, config: str, url: str | None, token_env: str | None, token: str | None) -> dict[str, Any]:
    """The hub's entry for ``target``: by URL, its token checked against the hub where it can be, or stdio."""
    import re

    from hermes_hub.app.cli.hosts import HostFileError
    from hermes_hub.infra.config import load_config

    if url is None:
        if token_env or token:
            _fail("--token-env and --token go with --url (a stdio hub needs no token)", 2)
        try:
            load_config(config)
        except ConfigError as e:
            _fail(f"{e}\nfix it first (`hermes-hub check {config}`); nothing was written", 2)
        return target.entry(Path(config))
    if token_env and token:
        _fail("give the token one way: --token-env VAR (the host reads it) or --token TOKEN", 2)
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        _fail(f"--url {url!r} is not an http(s) URL, e.g. http://127.0.0.1:8600/mcp", 2)
    if token_env is not None and not re.fullmatch(TOKEN_ENV_RE, token_env):
        _fail(f"--token-env {token_env!r} is not an environment variable's name, e.g. HERMES_TOKEN", 2)
    entry = target.remote_entry(url, token_env, token)  # a host that cannot say it fails before the hub is asked
    bearer = token if token is not None else (os.environ.get(token_env) if token_env else None)
    said = _probe(url, bearer)
    if said == "required" and not (token or token_env):
        raise HostFileError(f"the hub at {url} requires a token: pass --token-env VAR (the host reads the token "
                            f"from VAR) or --token TOKEN; `hermes-hub token create USER` makes one. Nothing was written.")
    if said == "refused":
        where = f"${token_env}" if token is None else "--token"
        raise HostFileError(f"the hub at {url} refused the token in {where} (401); check it with "
                            f"`hermes-hub token list`. Nothing was written.")
    if said is not None and said.startswith("unreachable"):
        click.echo(f"warning: {said}; the entry is written all the same", err=True)
    return entry


def _probe(url: str, bearer: str | None) -> str | None:
    """What the hub at ``url`` says of this token: None (served), "required", "refused", or "unreachable: ..."."""
    import httpx2

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-11-25"}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    try:
        status = httpx2.post(url, json=body, headers=headers, timeout=5.0).status_code
    except httpx2.HTTPError as e:
        return f"unreachable: no answer from {url} ({type(e).__name__})"
    if status == 401:
        return "refused" if bearer else "required"
    return None


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
            comments = host.comments
        elif Path(source).exists() or "/" in source or source.endswith((".json", ".toml")):
            path, key, label = Path(source), None, source
        else:
            raise hosts.HostFileError(f"'{source}' is neither a host ({', '.join(HOST_NAMES)}) nor a file")
        if source not in hosts.HOSTS:
            comments = path.name == "settings.json" and path.parent.name == "zed"
        toml = path.suffix == ".toml"
        if toml:
            doc = tomlfile.read(path)[0]
        else:
            doc = hosts.read_json_object(path, f"{label}'s config" if source in hosts.HOSTS else "the file", comments)
        if doc is None:
            raise hosts.HostFileError(f"{path} does not exist or is empty: there is nothing to import")
        key = key or next((k for k in ("mcpServers", "servers", "mcp", tomlfile.KEY, "context_servers") if k in doc),
                          None)
        if key is None or key not in doc:
            raise hosts.HostFileError(f"{path} has no 'mcpServers' (or VS Code's 'servers', opencode's 'mcp', "
                                      f"Zed's 'context_servers', Codex's [mcp_servers]): nothing to import")
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
