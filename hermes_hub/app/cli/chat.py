"""``hermes-hub chat``: a terminal chat with the hub's agent (the program is ``hermes_hub/chat/``)."""

from __future__ import annotations

import sys

import anyio
import click


@click.command("chat")
@click.option("--config", default="hub.json", show_default=True, help="hub.json of the hub to spawn over stdio")
@click.option("--url", envvar="HERMES_URL", show_envvar=True,
              help="chat with a running hub at this streamable HTTP URL instead (http://HOST:PORT/mcp)")
@click.option("--token", envvar="HERMES_TOKEN", show_envvar=True, help="bearer token for --url")
@click.option("--profile", help="agent profile to chat with (default: default)")
@click.option("--session", "session_id", metavar="ID", help="resume this session (its id is shown after each answer)")
@click.option("--once", metavar="TASK", help="run one task, print the answer and exit (1 if the run failed)")
@click.option("--json", "as_json", is_flag=True, help="with --once: print the whole result as JSON")
@click.option("-v", "--verbose", is_flag=True, help="show the spawned hub's log")
@click.pass_context
def chat_cmd(ctx: click.Context, config: str, url: str | None, token: str | None, profile: str | None,
             session_id: str | None, once: str | None, as_json: bool, verbose: bool) -> None:
    """Chat with the hub's agent: each line is one run of hermes_agent_run in the same session.

    Ctrl-C cancels the run in progress, /quit (or Ctrl-D) leaves, /help lists the commands.
    """
    from hermes_hub.chat.connection import Endpoint
    from hermes_hub.chat.conversation import Options, main

    if as_json and once is None:
        click.echo("error: --json goes with --once TASK", err=True)
        sys.exit(2)
    source, from_env = ctx.get_parameter_source, click.core.ParameterSource.ENVIRONMENT
    if source("url") == from_env and source("config") == click.core.ParameterSource.COMMANDLINE:
        url = None  # $HERMES_URL yields to a --config named on the command line
    if url is None and source("token") == from_env:
        token = None  # $HERMES_TOKEN is for a served hub; a spawned hub's caller is the local user
    options = Options(Endpoint(config=config, url=url, token=token, verbose=verbose), profile=profile,
                      session_id=session_id, once=once, as_json=as_json)
    try:
        sys.exit(anyio.run(main, options))
    except KeyboardInterrupt:  # Ctrl-C before the chat was up (it handles Ctrl-C itself once it is)
        click.echo("interrupted", err=True)
        sys.exit(130)
