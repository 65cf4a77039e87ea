"""``hermes-hub``: serve the hub, and list or call what it (or any one MCP server) offers.

Every debugging command talks to a *target*: the hub built from ``--config`` (default), a running
hub or server (``--url``), a raw stdio server (``--command``) or one hub.json entry without the hub
(``--direct NAME``). Failures exit non-zero with the reason on stderr.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import click

from hermes_hub import tables
from hermes_hub.admin_cli import audit_cmd, token, traces_cmd
from hermes_hub.chat_cli import chat_cmd
from hermes_hub.errors import ConfigError, HubError, cli_hint, for_terminal
from hermes_hub.install_cli import import_cmd, install
from hermes_hub.memory_cli import memory
from hermes_hub.storage_cli import storage

if TYPE_CHECKING:
    import mcp.types as types

    from hermes_hub.config import HubConfig
    from hermes_hub.target import Target

# Commands import the hub, the SDK and pydantic when they run, not when the CLI loads: `hermes-hub --help`
# would otherwise import ~650 modules first (measured: ~1 s of a 1.2 s --help).
log = logging.getLogger("hermes_hub")
NOT_READY_EXIT = 3  # `servers`: some enabled server is not READY
_HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None  # optional; measured ~15% less CPU per call


def _setup_logging(verbose: bool, default: int = logging.WARNING) -> None:
    level = logging.INFO if verbose else default
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("hermes_hub").setLevel(level)


def _fail(message: str, code: int = 1, hint_from: str | None = None) -> None:
    """Exit with ``message``; a hub error's message (or ``hint_from``) may get a terminal hint after it."""
    click.echo(f"error: {(message := for_terminal(message))}", err=True)
    if "`hermes-hub " not in message and (hint := cli_hint(message if hint_from is None else hint_from)):
        click.echo(f"hint: {hint}", err=True)
    sys.exit(code)


def load_config(path: str) -> HubConfig:
    """``hermes_hub.config.load_config``, imported on first use."""
    from hermes_hub.config import load_config as load

    return load(path)


def connect(target: Target) -> Any:
    """``hermes_hub.target.connect`` (which imports the hub), imported on first use."""
    from hermes_hub.target import connect as open_target

    return open_target(target)


def _run(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """Run an async command body, turning known failures into a one-line reason and exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mcp import MCPError

        from hermes_hub.target import BadTarget

        try:
            return anyio.run(functools.partial(fn, *args, **kwargs))
        except (HubError, MCPError, OSError, BaseExceptionGroup) as exc:
            leaves = _leaves(exc)
            if not all(isinstance(e, HubError | MCPError | OSError) for e in leaves):
                raise
            code = 2 if any(isinstance(e, ConfigError | BadTarget) for e in leaves) else 1
            _fail("; ".join(f"{e.message} (code {e.code})" if isinstance(e, MCPError) else str(e) for e in leaves), code)

    return wrapper


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed([
        click.option("--config", "config", default="hub.json", show_default=True, help="hub.json to build the hub from"),
        click.option("--url", help="talk to a running hub or MCP server at this streamable HTTP URL"),
        click.option("--command", "command", help="talk directly to a stdio MCP server started with this command line"),
        click.option("--direct", help="talk directly to this hub.json server, without the hub"),
        click.option("--json", "as_json", is_flag=True, help="machine-readable output"),
        click.option("-v", "--verbose", is_flag=True, help="log what the hub and its servers do"),
    ]):
        fn = opt(fn)
    return fn


def _target(config: str, url: str | None, command: str | None, direct: str | None) -> Target:
    from hermes_hub.target import Target

    if sum(x is not None for x in (url, command, direct)) > 1:
        _fail("give at most one of --url, --command, --direct", 2)
    return Target(config=config, url=url, command=command, direct=direct)


ARGS_HELP = ("arguments as a JSON object; @FILE reads them from a file, - from stdin "
             "(for values too large for the shell)")


def _json_args(raw: str | None) -> dict[str, Any]:
    """``--args``: inline JSON, ``@path`` (a file) or ``-`` (stdin)."""
    if not raw:
        return {}
    origin = "--args"
    if raw == "-":
        origin, raw = "--args - (stdin)", sys.stdin.read()
    elif raw.startswith("@"):
        path = raw[1:]
        origin = f"--args {raw}"
        try:
            with open(path, encoding="utf-8") as f:
                raw = f.read()
        except FileNotFoundError:
            _fail(f"--args {raw}: no such file; give the path of a JSON file after @ (e.g. --args @args.json), "
                  f"or inline JSON", 2)
        except (OSError, UnicodeDecodeError) as e:
            _fail(f"--args {raw}: cannot read it ({getattr(e, 'strerror', None) or e})", 2)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}" if "\n" in raw.strip() else f"column {e.colno}"
        _fail(f"{origin} is not valid JSON ({e.msg} at {where}); example: --args '{{\"query\": \"milk\"}}'", 2)
    if not isinstance(value, dict):
        _fail(f"{origin} must be a JSON object, e.g. --args '{{\"query\": \"milk\"}}'", 2)
    return value


def _dump(items: Any) -> str:
    if isinstance(items, list):
        return json.dumps([i.model_dump(by_alias=True, exclude_none=True, mode="json") for i in items], indent=2, ensure_ascii=False)
    return json.dumps(items.model_dump(by_alias=True, exclude_none=True, mode="json"), indent=2, ensure_ascii=False)


@click.group()
@click.version_option(package_name="hermes-hub")
def main() -> None:
    """hermes-hub: one MCP server in front of all your MCP servers."""


@main.command()
@click.option("--config", default="hub.json", show_default=True)
@click.option("--stdio", is_flag=True, help="serve over stdin/stdout (for hosts that spawn the hub)")
@click.option("--toolset", help="with --stdio: serve this toolset (hub.json 'toolsets') instead of the whole catalog")
@click.option("--host", help="HTTP address (default hub.host, 127.0.0.1)")
@click.option("--port", type=int, help="HTTP port (default hub.port, 8600)")
@click.option("-q", "--quiet", is_flag=True, help="log warnings only")
def serve(config: str, stdio: bool, toolset: str | None, host: str | None, port: int | None, quiet: bool) -> None:
    """Serve the hub over streamable HTTP (default) or stdio."""
    from hermes_hub.hub import Hub

    _setup_logging(not quiet)
    try:
        hub = Hub.from_file(config)  # reloads the file on SIGHUP and whenever it changes
    except ConfigError as e:
        _fail(str(e), 2)
    cfg = hub.config
    if toolset is not None and toolset not in cfg.toolsets:
        _fail(f"no toolset '{toolset}' in {config}; toolsets: {', '.join(cfg.toolsets) or 'none'}", 2)
    if stdio:
        from hermes_hub.upstream.stdio import serve_stdio

        sys.exit(anyio.run(serve_stdio, hub, toolset, backend_options={"use_uvloop": _HAS_UVLOOP}))
    if toolset is not None:
        _fail(f"--toolset is for --stdio; over HTTP every toolset is served at /mcp/<name> "
              f"(here /mcp/{toolset})", 2)
    from hermes_hub.upstream import listener
    from hermes_hub.upstream.app import build_app
    from hermes_hub.upstream.exposure import Exposure
    from hermes_hub.upstream.http11 import BoundedHead

    host = host or cfg.hub.host
    port = cfg.hub.port if port is None else port
    exposure = Exposure.decide(cfg, host, anyio.run(_has_tokens, cfg))  # once: it never changes while serving
    if (refusal := exposure.refusal()) is not None:
        _fail(refusal.replace("hub.json", config), 2)
    try:  # bound before we say we serve: a taken port is one sentence naming --port and hub.port
        sock, port = listener.bind(host, port, config)
    except listener.CannotListen as e:
        _fail(str(e), 2)
    log.info("serving %d servers at http://%s:%d/mcp; %s", len(cfg.enabled()), host, port, exposure.summary())
    # X-Forwarded-For is believed only from hub.trusted_proxies (uvicorn trusts 127.0.0.1 by default).
    proxies = list(exposure.trusted_proxies)
    listener.run(build_app(hub, exposure), sock, http=BoundedHead,
                 proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None,
                 log_level="warning" if quiet else "info", loop="uvloop" if _HAS_UVLOOP else "asyncio")


async def _has_tokens(cfg: HubConfig) -> bool:
    from hermes_hub.identity import Authenticator, StaticToken
    from hermes_hub.storage import open_store

    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        return await Authenticator(store, [StaticToken(t.token, t.user, t.role) for t in cfg.auth.tokens]).enabled()


@main.command()
@click.argument("config", required=False)
@click.option("--config", "config_opt", default="hub.json", show_default=True)
@click.option("--no-start", is_flag=True, help="check the file only: do not start the stdio servers")
def check(config: str | None, config_opt: str, no_start: bool) -> None:
    """Validate a hub.json and start each enabled stdio server once; every problem names its key path."""
    path = config or config_opt
    try:
        cfg = load_config(path)
    except ConfigError as e:
        _fail(str(e), 2)
    for w in cfg.warnings:
        click.echo(f"warning: {w}", err=True)
    rows = [[n, "disabled" if s.disabled else s.transport, cfg.prefix_of(n) or "(none)", s.command or s.url]
            for n, s in cfg.mcp_servers.items()]
    click.echo(tables.table(["server", "transport", "prefix", "command / url"], rows))
    from hermes_hub import checks, startup

    problems, (agent_problems, agent_warnings) = checks.unstartable(cfg), checks.agent_problems(cfg)
    if not no_start:  # a command that resolves may still not start (a Python without its packages)
        problems += startup.problems(path, cfg, problems)
    for warning in agent_warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in problems + agent_problems:
        click.echo(f"error: {problem}", err=True)
    if problems:
        _fail(f"{path}: {len(problems)} enabled server{'s' * (len(problems) != 1)} cannot start (see above)")
    if agent_problems:
        _fail(f"{path}: the model in 'agent' cannot answer (see above)")
    click.echo(checks.memory_line(cfg))
    click.echo(checks.agent_line(cfg))
    click.echo(f"{path}: OK, {len(cfg.enabled())} of {len(cfg.mcp_servers)} servers enabled")


@main.command()
@target_options
@_run
async def servers(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                  verbose: bool) -> None:
    """Show each server's state, counts, protocol and last error.

    Exit status: 0 when every enabled server is READY, 3 when one is not (the table shows which),
    1 when the hub cannot be reached, 2 for a bad config or command line.
    """
    _setup_logging(verbose)
    target = _target(config, url, command, direct)
    async with connect(target) as (client, hub):
        if hub is not None:
            status = hub.status(hub.local)  # in-process: the local user, an admin
        else:
            status_tool = next((t for t in (await client.list_tools()).tools
                                if tables.origin(t) == "hermes" and t.name.endswith("hub_status")), None)
            if status_tool is None:
                raise HubError(f"{target.describe()} is not a hermes hub (it has no hub_status tool), so it has no "
                               f"server states; list what it offers with `hermes-hub tools` instead")
            result = await client.call_tool(status_tool.name, {})
            status = result.structured_content or json.loads(tables.result_text(result))
    click.echo(json.dumps(status, indent=2, ensure_ascii=False) if as_json else tables.servers_table(status))
    if any(s["state"] not in ("READY", "DISABLED") for s in status["servers"]):
        sys.exit(NOT_READY_EXIT)


@main.command()
@click.option("--server", help="only the tools of this server")
@click.option("--tokens", is_flag=True, help="what the schemas cost in tokens: per endpoint, server and tool")
@target_options
@_run
async def tools(server: str | None, tokens: bool, config: str, url: str | None, command: str | None,
                direct: str | None, as_json: bool, verbose: bool) -> None:
    """List tools with their server and description (or, with --tokens, what their schemas cost)."""
    _setup_logging(verbose)
    async with connect(_target(config, url, command, direct)) as (client, hub):
        items = (await client.list_tools()).tools
        if tokens:
            from hermes_hub import tools_cli

            report = await tools_cli.token_report(client, hub, items)
            click.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else tools_cli.render(report, server))
            return
    if server:
        origins = sorted({o for t in items if (o := tables.origin(t))})
        items = [t for t in items if tables.origin(t) == server]
        if not items:
            _fail(f"no tools from server '{server}'; tools come from: {', '.join(origins) or 'no server'} "
                  f"(a server that is not READY has none: see `hermes-hub servers`)")
    if as_json:
        click.echo(_dump(items))
    else:
        click.echo(tables.table(["tool", "server", "description"], [[t.name, tables.origin(t), t.description]
                                                                    for t in items]))


@main.command()
@target_options
@_run
async def resources(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                    verbose: bool) -> None:
    """List resources and resource templates."""
    _setup_logging(verbose)
    async with connect(_target(config, url, command, direct)) as (client, _):
        caps = client.server_capabilities
        res = (await client.list_resources()).resources if caps and caps.resources else []
        tpl = (await client.list_resource_templates()).resource_templates if caps and caps.resources else []
    if as_json:
        click.echo(json.dumps({"resources": json.loads(_dump(res)), "templates": json.loads(_dump(tpl))}, indent=2, ensure_ascii=False))
        return
    rows = [[r.uri, tables.origin(r), r.name] for r in res] + [[t.uri_template, tables.origin(t), f"{t.name} (template)"]
                                                              for t in tpl]
    click.echo(tables.table(["uri", "server", "name"], rows, 90))


@main.command()
@target_options
@_run
async def prompts(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                  verbose: bool) -> None:
    """List prompts and their arguments."""
    _setup_logging(verbose)
    async with connect(_target(config, url, command, direct)) as (client, _):
        caps = client.server_capabilities
        items = (await client.list_prompts()).prompts if caps and caps.prompts else []
    if as_json:
        click.echo(_dump(items))
        return
    rows = [[p.name, tables.origin(p), ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or []),
             p.description] for p in items]
    click.echo(tables.table(["prompt", "server", "arguments", "description"], rows))


@main.command()
@click.argument("tool")
@click.option("--args", "raw_args", metavar="JSON|@FILE|-", help=ARGS_HELP)
@target_options
@_run
async def call(tool: str, raw_args: str | None, config: str, url: str | None, command: str | None,
               direct: str | None, as_json: bool, verbose: bool) -> None:
    """Call TOOL with --args JSON (or @FILE, or - for stdin) and print its result (exit 1 if the tool reports an
    error)."""
    _setup_logging(verbose)
    arguments = _json_args(raw_args)
    async with connect(_target(config, url, command, direct)) as (client, _):
        result: types.CallToolResult = await client.call_tool(tool, arguments)
    click.echo(_dump(result) if as_json else tables.result_text(result))
    if result.is_error:
        _fail(f"tool '{tool}' returned an error (shown above)", hint_from=tables.result_text(result))


@main.command()
@click.argument("uri")
@target_options
@_run
async def read(uri: str, config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
               verbose: bool) -> None:
    """Read the resource at URI."""
    _setup_logging(verbose)
    async with connect(_target(config, url, command, direct)) as (client, _):
        result = await client.read_resource(uri)
    click.echo(_dump(result) if as_json else tables.result_text(result))


@main.command()
@click.argument("name")
@click.option("--args", "raw_args", metavar="JSON|@FILE|-", help=f"prompt {ARGS_HELP}; values become strings")
@target_options
@_run
async def prompt(name: str, raw_args: str | None, config: str, url: str | None, command: str | None,
                 direct: str | None, as_json: bool, verbose: bool) -> None:
    """Get prompt NAME filled with --args JSON."""
    _setup_logging(verbose)
    arguments = {k: str(v) for k, v in _json_args(raw_args).items()}
    async with connect(_target(config, url, command, direct)) as (client, _):
        result = await client.get_prompt(name, arguments)
    click.echo(_dump(result) if as_json else tables.result_text(result))


main.add_command(token)
main.add_command(audit_cmd)
main.add_command(memory)
main.add_command(traces_cmd)
main.add_command(chat_cmd)
main.add_command(install)
main.add_command(import_cmd)
main.add_command(storage)
