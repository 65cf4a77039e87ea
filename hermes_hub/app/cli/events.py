"""``hermes-hub events``: the event bus of a served hub, for a person debugging (``GET /events``).

    hermes-hub events --follow                 # everything you may see, as it happens
    hermes-hub events --run run_Ab12 [--follow] # one agent run's events (kept ones first)

A user sees their own events, an admin everyone's (``--user`` narrows it), as in the audit.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import click

from hermes_hub.app.cli.command import fail


@click.command("events")
@click.option("--follow", is_flag=True, help="keep printing events as they happen (Ctrl-C to stop)")
@click.option("--run", "run_id", metavar="ID", help="only this agent run's events")
@click.option("--user", metavar="U", help="only this user's events (admins; users see their own anyway)")
@click.option("--url", envvar="HERMES_URL", show_envvar=True,
              help="the served hub (default: http://HOST:PORT of hub.json's hub.host and hub.port)")
@click.option("--token", envvar="HERMES_TOKEN", show_envvar=True, help="bearer token")
@click.option("--json", "as_json", is_flag=True, help="one JSON object a line")
@click.option("--config", default="hub.json", show_default=True, help="hub.json, to find the hub's address")
def events_cmd(follow: bool, run_id: str | None, user: str | None, url: str | None, token: str | None,
               as_json: bool, config: str) -> None:
    """Print the events of a served hub: tool calls, agent runs, model requests."""
    if not follow and run_id is None:
        fail("say what to show: --run ID for one run's kept events, --follow for events as they happen", 2)
    if url is None:
        from hermes_hub.infra.config import load_config
        from hermes_hub.infra.errors import ConfigError

        try:
            hub = load_config(config).hub
        except ConfigError as e:
            fail(f"{e}; or give the hub's address with --url", 2)
        host = "127.0.0.1" if hub.host in ("0.0.0.0", "::", "") else hub.host
        url = f"http://{host}:{hub.port}"
    params = {k: v for k, v in {"run": run_id, "user": user, "follow": "1" if follow else None}.items() if v}
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        anyio.run(_print, url.rstrip("/").removesuffix("/mcp") + "/events", params, headers, as_json)
    except KeyboardInterrupt:
        pass


async def _print(url: str, params: dict[str, str], headers: dict[str, str], as_json: bool) -> None:
    import httpx2  # here: loading the command line stays light (tests/test_package.py)

    timeout = httpx2.Timeout(10.0, read=None)  # a quiet stream is fine: the hub sends a comment every 15 s
    async with httpx2.AsyncClient(timeout=timeout) as client:
        try:
            async with client.stream("GET", url, params=params, headers=headers) as response:
                if response.status_code != 200:
                    body = (await response.aread()).decode(errors="replace")
                    try:
                        body = json.loads(body).get("error_description", body)
                    except (ValueError, AttributeError):
                        pass
                    if response.status_code == 401 and "authorization" not in headers:
                        fail(f"{url} answered 401: this hub needs a token: pass --token or set HERMES_TOKEN")
                    if response.status_code == 401:
                        fail(f"{url} refused the token (401): pass a valid one with --token or HERMES_TOKEN")
                    fail(f"{url} answered {response.status_code}: {body}")
                async for line in response.aiter_lines():
                    data = line[len("data: "):] if line.startswith("data: ") else line
                    if not data or line.startswith((":", "id:")):
                        continue
                    event = json.loads(data)
                    click.echo(json.dumps(event) if as_json else _line(event))
        except httpx2.TransportError as e:
            fail(f"cannot reach the hub at {url}: {e}; is `hermes-hub serve` running there? (--url)")


def _line(event: dict[str, Any]) -> str:
    fixed = ("type", "seq", "at", "run_id", "user_id")
    rest = " ".join(f"{k}={v}" for k, v in event.items() if k not in fixed)
    return f"{event['seq']:>6} {event['type']:<22} run={event['run_id'] or '-'} user={event['user_id']} {rest}"
