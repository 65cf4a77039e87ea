"""``hermes-hub token``, ``audit`` and ``traces``: the hub's own state, read from its store directly, or from a
served hub over ``--url`` (tokens through its admin-only ``hermes_token_*`` tools)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.command import leaves as _leaves
from hermes_hub.app.cli.remote import call_own, hub_client, local_only, remote_options
from hermes_hub.infra.errors import ConfigError, HubError

if TYPE_CHECKING:
    from hermes_hub.infra.storage import Store

# The store, pydantic and the audit code are imported when a command runs, so `hermes-hub --help` stays fast.
ROLES = ["user", "admin"]  # hermes_hub.services.identity.USER, ADMIN
CONFIG = click.option("--config", default="hub.json", show_default=True, help="hub.json naming storage.url")


@asynccontextmanager
async def _store(config: str) -> AsyncIterator[Store]:
    from hermes_hub.infra.config import load_config
    from hermes_hub.infra.storage import open_store

    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        yield store


def _run(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return anyio.run(fn, *args)
    except (HubError, BaseExceptionGroup) as e:  # a group: a --url connection's task group around the error
        leaves = _leaves(e)
        if not all(isinstance(leaf, HubError) for leaf in leaves):
            raise
        click.echo(f"error: {'; '.join(str(leaf) for leaf in leaves)}", err=True)
        sys.exit(2 if any(isinstance(leaf, ConfigError) for leaf in leaves) else 1)


@click.group()
def token() -> None:
    """Create, list and revoke bearer tokens for HTTP callers."""


@token.command("create")
@click.argument("user")
@click.option("--role", type=click.Choice(ROLES), default="user", show_default=True)
@click.option("--name", default="", help="a label, e.g. the device using it")
@remote_options
@CONFIG
def token_create(user: str, role: str, name: str, url: str | None, config: str) -> None:
    """Create a token for USER and print it once (only its hash is stored); over --url, as an admin."""

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                made = await call_own(client, "hermes_token_create", {"user": user, "role": role, "name": name})
            secret, first = made["token"], made["first"]
            record = (made["id"], made["user"], made["role"])
        else:
            from hermes_hub.core.builtins.token_tools import live_tokens
            from hermes_hub.services.identity import create_token

            from hermes_hub.infra.config import load_config

            async with _store(config) as store:
                first = not load_config(config).auth.tokens and not await live_tokens(store)
                secret, made = await create_token(store, user, role, name)
            record = (made.id, made.user_id, made.role)
        click.echo(secret)
        click.echo(f"created {record[0]} for {record[1]} (role {record[2]}); it is shown only this once", err=True)
        click.echo(f"a host sends it as the header   Authorization: Bearer {secret}", err=True)
        click.echo(f"the CLI reads it (with --url):  export HERMES_TOKEN={secret}", err=True)
        if first:  # whether a hub requires tokens is decided when it starts
            click.echo("this is the first token: a hub already serving without tokens keeps doing so until it "
                       "restarts", err=True)

    _run(go)


@token.command("list")
@click.option("--json", "as_json", is_flag=True)
@remote_options
@CONFIG
def token_list(as_json: bool, url: str | None, config: str) -> None:
    """List tokens and OAuth sign-ins with their client names (never their secrets)."""

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                data = (await call_own(client, "hermes_token_list", {}))["tokens"]
        else:
            from hermes_hub.core.builtins.token_tools import token_rows

            async with _store(config) as store:
                data = await token_rows(store)
        if as_json:
            click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            click.echo(tables.table(["id", "user", "role", "name", "created", "revoked"],
                                    [[d["id"], d["user"], d["role"], d["name"], d["created_at"][:19],
                                      (d["revoked_at"] or "")[:19]] for d in data]))

    _run(go)


@token.command("revoke")
@click.argument("token_id")
@remote_options
@CONFIG
def token_revoke(token_id: str, url: str | None, config: str) -> None:
    """Revoke the token or OAuth sign-in with TOKEN_ID (see `token list`), on every replica."""

    async def go() -> None:
        if url is not None:
            async with hub_client(config, url) as client:
                done = await call_own(client, "hermes_token_revoke", {"token_id": token_id})
        else:
            from hermes_hub.core.builtins.token_tools import revoke

            async with _store(config) as store:
                done = await revoke(store, token_id)
        if done["kind"] == "oauth":
            click.echo(f"revoked {token_id}: its client must sign in again")
            return
        click.echo(f"revoked {token_id}")
        if not done["left"]:
            click.echo("no live token is left: a hub that requires tokens now refuses every HTTP caller until "
                       "you create one with `hermes-hub token create USER`", err=True)

    _run(go)


@click.command("audit")
@click.option("--user", help="whose calls (default: everyone's; over --url, admins only)")
@click.option("--tool", help="only this public tool name")
@click.option("--since", help="ISO 8601 time, or a duration like 30m, 12h, 7d")
@click.option("--limit", type=int, default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.option("--unmask", "unmask", metavar="CALL_ID",
              help="show the original arguments and result of a masked call (audited)")
@remote_options
@CONFIG
def audit_cmd(user: str | None, tool: str | None, since: str | None, limit: int, as_json: bool, unmask: str | None,
              url: str | None, config: str) -> None:
    """Show tool calls made through the hub, newest first (secrets masked); --unmask CALL_ID shows one
    masked result's original to whoever holds the hub's store and key, and writes an audit row naming them.
    With --url, the served hub's hermes_audit_query answers: your own calls, or anyone's for an admin."""

    from hermes_hub.services import audit

    local_only(url, unmask=unmask)
    if unmask is not None:
        _run(_unmask, config, unmask, as_json)
        return

    async def go() -> None:
        after = _since(since)
        if url is not None:
            start = datetime.now(UTC) - after if isinstance(after, timedelta) else after
            args = {"limit": limit, **({"user": user} if user else {}), **({"tool": tool} if tool else {}),
                    **({"since": start.isoformat()} if start else {})}
            async with hub_client(config, url) as client:
                rows = (await call_own(client, "hermes_audit_query", args))["calls"]
        else:
            async with _store(config) as store:
                found = await audit.query(store, "cli", admin=True, user=user, tool=tool, since=after, limit=limit)
            rows = [r.model_dump(mode="json") for r in found]
        if as_json:
            click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        click.echo(tables.table(["time", "user", "tool", "outcome", "ms", "call", "error"],
                                [[r["at"][:19], r["user_id"], r["tool"], r["outcome"], round(r["duration_ms"], 1),
                                  r.get("call_id") or "", r.get("error")] for r in rows]))

    _run(go)


async def _unmask(config: str, call_id: str, as_json: bool) -> None:
    """The CLI opens the store and the key itself, so its operator is an admin; the row names them."""
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.identity import local_user_name
    from hermes_hub.core.pipeline.originals import unmask
    from hermes_hub.infra.storage import open_store
    from hermes_hub.services.vault import Vault, load_hub_key

    cfg = load_config(config)
    who = cfg.auth.local_user or local_user_name()
    keep = cfg.guards.mask.keep_hours if cfg.guards.mask else 24.0
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        vault = Vault(store, load_hub_key(cfg.storage.url, cfg.base_dir))
        found = await unmask(store, vault, call_id, viewer_id=who, admin=True, keep_hours=keep)
    if as_json:
        click.echo(json.dumps({"call_id": found.call_id, "user": found.user_id, "tool": found.tool,
                               "masked": found.masked, "arguments": found.arguments, "result": found.result},
                               indent=2, ensure_ascii=False, default=str))
        return
    masked = ", ".join(f"{n} {kind}" for kind, n in found.masked.items())
    click.echo(f"call {found.call_id} of {found.user_id}: {found.tool} (masked: {masked}); "
               f"this unmask is in the audit as {who}", err=True)
    click.echo(found.text())


async def _traces(config: str, url: str | None, run_id: str | None, user: str | None, limit: int,
                  prompt: bool) -> dict[str, Any]:
    from hermes_hub.core.agent.runs import run_summary, run_trace
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.identity import local_user_name

    if url is not None:
        async with hub_client(config, url) as client:
            if run_id is not None:
                return await call_own(client, "hermes_trace_get", {"run_id": run_id, "prompt": prompt})
            return await call_own(client, "hermes_trace_list", {"limit": limit})
    who = user or load_config(config).auth.local_user or local_user_name()
    async with _store(config) as store:
        if run_id is not None:
            return run_trace(await store.get_run(who, run_id), prompt=prompt)
        return {"runs": [run_summary(r) for r in await store.list_runs(who, limit=limit)]}


def _since(raw: str | None) -> datetime | timedelta | None:
    if not raw:
        return None
    units = {"m": 60, "h": 3600, "d": 86400}
    if raw[-1:] in units and raw[:-1].isdigit():
        return timedelta(seconds=int(raw[:-1]) * units[raw[-1]])
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        raise HubError(f"--since {raw!r}: give an ISO 8601 time (2026-11-29T08:00:00Z) or a duration (30m, 12h, 7d)")


@click.command("traces")
@click.argument("run_id", required=False)
@click.option("--user", help="whose runs (default: the local user, auth.local_user or the OS user)")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.option("--prompt", "prompt", is_flag=True, help="show what each model request contained and the answers")
@remote_options
@CONFIG
def traces_cmd(run_id: str | None, user: str | None, limit: int, as_json: bool, prompt: bool, url: str | None,
               config: str) -> None:
    """List recent agent runs with their outcome and rating, or show RUN_ID's trace round by round (with
    --url, the served hub's runs of the token's user)."""
    local_only(url, user=user)

    async def go() -> None:
        from hermes_hub.core.agent.runs import prompt_lines

        if prompt and run_id is None:
            raise HubError("--prompt shows one run's requests: give its RUN_ID (hermes-hub traces lists them)")
        found = await _traces(config, url, run_id, user, limit, prompt)
        if as_json:
            click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        elif prompt:
            click.echo("\n".join(prompt_lines(found)))
        elif run_id is None:
            click.echo(tables.table(["run", "started", "profile", "stop", "rounds", "rating", "task"],
                                    [[r["run_id"], r["started_at"][:19], r["profile"], r["stop_reason"], r["rounds"],
                                      r["rating"] or "", r["task"]] for r in found["runs"]]))
        else:
            click.echo(f"{found['run_id']} ({found['profile']}): {found['stop_reason']} after {found['rounds']} "
                       f"rounds, {found['usage']['input_tokens']}+{found['usage']['output_tokens']} tokens")
            for e in found["events"]:
                detail = ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("at", "kind"))
                click.echo(f"  {e['at']:>8.3f}s {e['kind']:<8} {detail}")
            click.echo(f"answer: {found['answer']}")

    _run(go)
