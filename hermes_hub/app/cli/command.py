"""What every command shares: logging, failing with a reason (and a hint), running an async body, and
the *target* options (``--config``, ``--url``, ``--command``, ``--direct``) of the debugging commands."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import click

from hermes_hub.infra.errors import ConfigError, HubError, cli_hint, for_terminal

if TYPE_CHECKING:
    from hermes_hub.app.cli.target import Target
    from hermes_hub.infra.config import HubConfig

# Commands import the hub, the SDK and pydantic when they run, not when the CLI loads: `hermes-hub --help`
# would otherwise import ~650 modules first (measured: ~1 s of a 1.2 s --help).


def _listed_or_said(record: logging.LogRecord) -> bool:
    """The SDK client warns when a called tool was not in tools/list; most of the hub's own are not listed
    (``hub.own_tools``) and commands (call, chat, eval) call them by name on purpose, so none prints that."""
    return "not listed by server, cannot validate" not in record.getMessage()


logging.getLogger("client").addFilter(_listed_or_said)  # the SDK's client session logger (mcp.client.session)


def setup_logging(verbose: bool, default: int = logging.WARNING) -> None:
    level = logging.INFO if verbose else default
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("hermes_hub").setLevel(level)
    from hermes_hub.protocol.upstream.listener import demote

    for name in ("httpx", "httpx2"):  # a line per request to an HTTP server, health pings included: DEBUG
        demote(name)


def fail(message: str, code: int = 1, hint_from: str | None = None) -> None:
    """Exit with ``message``; a hub error's message (or ``hint_from``) may get a terminal hint after it."""
    click.echo(f"error: {(message := for_terminal(message))}", err=True)
    if "`hermes-hub " not in message and (hint := cli_hint(message if hint_from is None else hint_from)):
        click.echo(f"hint: {hint}", err=True)
    sys.exit(code)


def load_config(path: str) -> HubConfig:
    """``hermes_hub.infra.config.load_config``, imported on first use."""
    from hermes_hub.infra.config import load_config as load

    return load(path)


def connect(target: Target) -> Any:
    """``hermes_hub.app.cli.target.connect`` (which imports the hub), imported on first use."""
    from hermes_hub.app.cli.target import connect as open_target

    return open_target(target)


def async_command(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """Run an async command body, turning known failures into a one-line reason and exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mcp import MCPError

        from hermes_hub.app.cli.target import BadTarget

        try:
            return anyio.run(functools.partial(fn, *args, **kwargs))
        except (HubError, MCPError, OSError, BaseExceptionGroup) as exc:
            failed = leaves(exc)
            if not all(isinstance(e, HubError | MCPError | OSError) for e in failed):
                raise
            code = 2 if any(isinstance(e, ConfigError | BadTarget) for e in failed) else 1
            fail("; ".join(f"{e.message} (code {e.code})" if isinstance(e, MCPError) else str(e) for e in failed), code)

    return wrapper


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in leaves(e)]
    return [exc]


DISCOVERED_KEY = "hermes_hub.discovered"  # the URL of the hub found serving --config (running_hub)
TOKEN_KEY = "hermes_hub.token"  # where --token waits in the click context (never a function argument, never shown)
IN_PROCESS_KEY = "hermes_hub.in_process"


def _keep_in_process(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[IN_PROCESS_KEY] = value


def keep_token(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta[TOKEN_KEY] = (value, ctx.get_parameter_source("token"))


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed([
        click.option("--config", "config", default="hub.json", show_default=True, help="hub.json to build the hub from"),
        click.option("--url", envvar="HERMES_URL", show_envvar=True,
                     help="talk to a running hub or MCP server at this streamable HTTP URL (http://HOST:PORT/mcp)"),
        click.option("--token", envvar="HERMES_TOKEN", show_envvar=True, expose_value=False, callback=keep_token,
                     help="bearer token for --url, when the hub has tokens (`hermes-hub token create USER`)"),
        click.option("--command", "command", help="talk directly to a stdio MCP server started with this command line"),
        click.option("--direct", help="talk directly to this hub.json server, without the hub"),
        click.option("--in-process", is_flag=True, expose_value=False, callback=_keep_in_process,
                     help="build the hub in this process even when a hub already serves this hub.json"),
        click.option("--json", "as_json", is_flag=True, help="machine-readable output"),
        click.option("-v", "--verbose", is_flag=True, help="log what the hub and its servers do"),
    ]):
        fn = opt(fn)
    return fn


def make_target(config: str, url: str | None, command: str | None, direct: str | None, *,
                discover: bool = True) -> Target:
    """The target the options name; with none named, the hub that already serves ``config`` when there is one
    (``discover``), else the hub built in this process."""
    from hermes_hub.app.cli.target import Target

    ctx = click.get_current_context(silent=True)
    token, token_from = ctx.meta.get(TOKEN_KEY, (None, None)) if ctx else (None, None)
    given = (lambda name: ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.ENVIRONMENT,
                                                                 click.core.ParameterSource.DEFAULT)) if ctx else None
    if (url is not None and given and not given("url") and (command or direct or given("config"))
            and url != ctx.meta.get(DISCOVERED_KEY)):
        url = None  # $HERMES_URL yields to a target named on the command line (a hub found serving it does not)
    if sum(x is not None for x in (url, command, direct)) > 1:
        fail("give at most one of --url, --command, --direct", 2)
    if url is None and command is None and direct is None and discover and not (ctx and ctx.meta.get(IN_PROCESS_KEY)):
        running = running_hub(config, token)
        if running is not None:
            return Target(config=config, url=running, token=token)
    if url is None and token is not None:
        if token_from == click.core.ParameterSource.COMMANDLINE:
            fail("--token goes with --url (or HERMES_URL): a hub built in-process or a raw server takes no token", 2)
        token = None  # $HERMES_TOKEN is for a served hub only
    return Target(config=config, url=url, command=command, direct=direct, token=token)


def running_hub(config: str, token: str | None, *, otherwise: str = "--in-process builds one here") -> str | None:
    """The URL of the hub that already serves ``config`` (the same file, so the same store), said in one line
    that ends with ``otherwise`` (how to do without it); None when there is none, or when it needs a token and
    none is given (then the command works here)."""
    from pathlib import Path

    from hermes_hub.app.serving.presence import serving
    from hermes_hub.infra.config import load_config

    try:
        cfg = load_config(config)
    except HubError:
        return None  # the in-process path says what is wrong with the file
    found = serving(cfg)
    if found is None or found.url is None or Path(found.config) != Path(config).resolve():
        return None
    if found.token_required and token is None:
        return None
    click.echo(f"talking to the hub serving {config} at {found.url} (pid {found.pid}); {otherwise}",
               err=True)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[DISCOVERED_KEY] = found.url
    return found.url


ARGS_HELP = ("arguments as a JSON object; @FILE reads them from a file, - from stdin "
             "(for values too large for the shell)")


def json_args(raw: str | None) -> dict[str, Any]:
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
            fail(f"--args {raw}: no such file; give the path of a JSON file after @ (e.g. --args @args.json), "
                  f"or inline JSON", 2)
        except (OSError, UnicodeDecodeError) as e:
            fail(f"--args {raw}: cannot read it ({getattr(e, 'strerror', None) or e})", 2)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}" if "\n" in raw.strip() else f"column {e.colno}"
        fail(f"{origin} is not valid JSON ({e.msg} at {where}); example: --args '{{\"query\": \"milk\"}}'", 2)
    if not isinstance(value, dict):
        fail(f"{origin} must be a JSON object, e.g. --args '{{\"query\": \"milk\"}}'", 2)
    return value


def dump(items: Any) -> str:
    if isinstance(items, list):
        return json.dumps([i.model_dump(by_alias=True, exclude_none=True, mode="json") for i in items], indent=2, ensure_ascii=False)
    return json.dumps(items.model_dump(by_alias=True, exclude_none=True, mode="json"), indent=2, ensure_ascii=False)
