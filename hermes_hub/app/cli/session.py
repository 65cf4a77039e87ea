"""``hermes-hub session summarize ID``: fold a session into its summary now, on the hub's store, with the
hub's model (``agent``), to see what a later run's model will read in place of the older messages."""

from __future__ import annotations

import json

import click

from hermes_hub.app.cli.admin import CONFIG, _run
from hermes_hub.infra.errors import HubError


@click.group()
def session() -> None:
    """Work on one stored session."""


@session.command("summarize")
@click.argument("session_id")
@click.option("--window", type=int, default=0, show_default=True,
              help="leave the session's last N messages out of the fold, as a run with agent.window N does")
@click.option("--user", help="whose session (default: the local user, auth.local_user or the OS user)")
@click.option("--json", "as_json", is_flag=True)
@CONFIG
def summarize_cmd(session_id: str, window: int, user: str | None, as_json: bool, config: str) -> None:
    """Fold SESSION_ID's messages into its summary now and print the summary."""
    if window < 0:
        raise click.BadParameter("must be 0 or more", param_hint="--window")

    async def go() -> None:
        from hermes_hub.core.agent.summaries import Summarizer
        from hermes_hub.infra.config import load_config
        from hermes_hub.services.identity import local_user_name
        from hermes_hub.infra.models import make_provider
        from hermes_hub.infra.storage import open_store

        cfg = load_config(config)
        if cfg.agent.provider in (None, "sampling"):
            raise HubError("folding needs a model the command can call itself: set agent.provider in hub.json to "
                           "anthropic, openai or scripted (sampling borrows a host's model, and no host is here)")
        who = user or cfg.auth.local_user or local_user_name()
        provider = make_provider(cfg.agent)
        try:
            async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
                summary = await Summarizer(store, provider).fold_now(who, session_id, window=window)
        finally:
            await provider.aclose()
        if as_json:
            click.echo(json.dumps({"session_id": session_id, "summary": summary}, ensure_ascii=False, indent=2))
        else:
            click.echo(summary or "(the session has no summary: nothing to fold)")

    _run(go)
