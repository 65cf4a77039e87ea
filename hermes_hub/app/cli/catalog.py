"""What a target offers: ``servers``, ``tools``, ``resources``, ``prompts``, and ``call``, ``read``,
``prompt`` to use one. Every command talks to a target: the hub built from ``--config`` (default), a
running hub or server (``--url``), a raw stdio server (``--command``) or one hub.json entry without the
hub (``--direct NAME``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.command import (
    ARGS_HELP,
    async_command,
    connect,
    dump,
    fail,
    json_args,
    make_target,
    setup_logging,
    target_options,
)
from hermes_hub.infra.errors import HubError

if TYPE_CHECKING:
    import mcp.types as types

NOT_READY_EXIT = 3  # `servers`: some enabled server is not READY


@click.command()
@target_options
@async_command
async def servers(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                  verbose: bool) -> None:
    """Show each server's state, counts, protocol and last error.

    Exit status: 0 when every enabled server is READY, 3 when one is not (the table shows which),
    1 when the hub cannot be reached, 2 for a bad config or command line.
    """
    setup_logging(verbose)
    target = make_target(config, url, command, direct)
    async with connect(target) as (client, hub):
        if hub is not None:
            status = hub.status(hub.local)  # in-process: the local user, an admin
        else:
            status_tool = tables.status_tool((await client.list_tools()).tools)
            if status_tool is None:
                raise HubError(f"{target.describe()} is not a hermes hub (it has no hub_status tool), so it has no "
                               f"server states; list what it offers with `hermes-hub tools` instead")
            result = await client.call_tool(status_tool, {})
            status = result.structured_content or json.loads(tables.result_text(result))
    click.echo(json.dumps(status, indent=2, ensure_ascii=False) if as_json else tables.servers_table(status))
    if any(s["state"] not in ("READY", "DISABLED") for s in status["servers"]):
        sys.exit(NOT_READY_EXIT)


@click.group(invoke_without_command=True)
@click.option("--server", help="only the tools of this server")
@click.option("--tokens", is_flag=True, help="what the schemas cost in tokens: per endpoint, server and tool")
@click.option("--show", metavar="NAME", help="one tool in full, hub.json's overrides beside the server's values")
@click.option("--drift", is_flag=True, help="pinned tools withheld because their definition changed, with a diff "
              "(exit 3 when there is one)")
@target_options
@click.pass_context
def tools(ctx: click.Context, **options: object) -> None:
    """List tools with their server and description (or, with --tokens, what their schemas cost); `tools pin`
    and `tools approve` pin their definitions."""
    if ctx.invoked_subcommand is None:
        list_tools(**options)  # type: ignore[arg-type]


@async_command
async def list_tools(server: str | None, tokens: bool, show: str | None, drift: bool, config: str, url: str | None,
                     command: str | None, direct: str | None, as_json: bool, verbose: bool) -> None:
    setup_logging(verbose)
    async with connect(make_target(config, url, command, direct)) as (client, hub):
        items = (await client.list_tools()).tools
        if drift or show:
            from hermes_hub.app.cli import pins

            outcome = await pins.show_drift(client, hub, as_json) if drift else pins.show_tool(show, items, hub, as_json)
        elif tokens:
            from hermes_hub.app.cli import tool_tokens

            report = await tool_tokens.token_report(client, hub, items)
            click.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else tool_tokens.render(report, server))
            return
    if drift or show:
        return pins.finish(outcome)
    if server:
        origins = sorted({o for t in items if (o := tables.origin(t))})
        items = [t for t in items if tables.origin(t) == server]
        if not items:
            fail(f"no tools from server '{server}'; tools come from: {', '.join(origins) or 'no server'} "
                  f"(a server that is not READY has none: see `hermes-hub servers`)")
    if as_json:
        click.echo(dump(items))
    else:
        click.echo(tables.table(["tool", "server", "description"], [[t.name, tables.origin(t), t.description]
                                                                    for t in items]))


@click.command()
@target_options
@async_command
async def resources(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                    verbose: bool) -> None:
    """List resources and resource templates."""
    setup_logging(verbose)
    async with connect(make_target(config, url, command, direct)) as (client, _):
        caps = client.server_capabilities
        res = (await client.list_resources()).resources if caps and caps.resources else []
        tpl = (await client.list_resource_templates()).resource_templates if caps and caps.resources else []
    if as_json:
        click.echo(json.dumps({"resources": json.loads(dump(res)), "templates": json.loads(dump(tpl))}, indent=2, ensure_ascii=False))
        return
    rows = [[r.uri, tables.origin(r), r.name] for r in res] + [[t.uri_template, tables.origin(t), f"{t.name} (template)"]
                                                              for t in tpl]
    click.echo(tables.table(["uri", "server", "name"], rows, 90))


@click.command()
@target_options
@async_command
async def prompts(config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
                  verbose: bool) -> None:
    """List prompts and their arguments."""
    setup_logging(verbose)
    async with connect(make_target(config, url, command, direct)) as (client, _):
        caps = client.server_capabilities
        items = (await client.list_prompts()).prompts if caps and caps.prompts else []
    if as_json:
        click.echo(dump(items))
        return
    rows = [[p.name, tables.origin(p), ", ".join(a.name + ("" if a.required else "?") for a in p.arguments or []),
             p.description] for p in items]
    click.echo(tables.table(["prompt", "server", "arguments", "description"], rows))


@click.command()
@click.argument("tool")
@click.option("--args", "raw_args", metavar="JSON|@FILE|-", help=ARGS_HELP)
@target_options
@async_command
async def call(tool: str, raw_args: str | None, config: str, url: str | None, command: str | None,
               direct: str | None, as_json: bool, verbose: bool) -> None:
    """Call TOOL with --args JSON (or @FILE, or - for stdin) and print its result (exit 1 if the tool reports an
    error)."""
    setup_logging(verbose)
    arguments = json_args(raw_args)
    async with connect(make_target(config, url, command, direct)) as (client, _):
        result: types.CallToolResult = await client.call_tool(tool, arguments)
    click.echo(dump(result) if as_json else tables.result_text(result))
    if result.is_error:
        fail(f"tool '{tool}' returned an error (shown above)", hint_from=tables.result_text(result))


@click.command()
@click.argument("uri")
@target_options
@async_command
async def read(uri: str, config: str, url: str | None, command: str | None, direct: str | None, as_json: bool,
               verbose: bool) -> None:
    """Read the resource at URI."""
    setup_logging(verbose)
    async with connect(make_target(config, url, command, direct)) as (client, _):
        result = await client.read_resource(uri)
    click.echo(dump(result) if as_json else tables.result_text(result))


@click.command()
@click.argument("name")
@click.option("--args", "raw_args", metavar="JSON|@FILE|-", help=f"prompt {ARGS_HELP}; values become strings")
@target_options
@async_command
async def prompt(name: str, raw_args: str | None, config: str, url: str | None, command: str | None,
                 direct: str | None, as_json: bool, verbose: bool) -> None:
    """Get prompt NAME filled with --args JSON."""
    setup_logging(verbose)
    arguments = {k: str(v) for k, v in json_args(raw_args).items()}
    async with connect(make_target(config, url, command, direct)) as (client, _):
        result = await client.get_prompt(name, arguments)
    click.echo(dump(result) if as_json else tables.result_text(result))
