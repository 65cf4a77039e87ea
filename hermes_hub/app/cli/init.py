"""``hermes-hub init [DIR]``: a starter hub.json for an installed hermes-hub, no checkout needed.

Its three demo servers are the packaged ``hermes_hub.demo`` modules (the checkout's hub.json runs them from
``servers/``, which a pip install does not have), its agent is the scripted demo model written beside it,
and its data stays in DIR (``.data/``), so a first run needs no API key and touches nothing else.
"""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path

import click

from hermes_hub.app.cli.command import fail

DEMOS = ("calendar", "reminders", "notes")
MODEL = "demo_model.json"


def starter() -> dict[str, object]:
    servers = {name: {"command": "python", "args": ["-m", f"hermes_hub.demo.{name}"], "cwd": ".",
                      "env": {"HERMES_DEMO_DATA": "${HERMES_DEMO_DATA:-.data/demo}"}} for name in DEMOS}
    return {"mcpServers": servers, "hub": {"name": "hermes-hub", "port": 8600},
            "storage": {"url": "sqlite:///.data/hub.db"},
            "agent": {"provider": "scripted", "script": MODEL, "confirm": ["*_send_*"]}}


def _render(value: object, indent: str = "") -> str:
    """JSON as the bundled hub.json is written: a list or object of plain values on one line when it fits."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    plain = not isinstance(value, dict | list) or all(
        not isinstance(v, dict | list) for v in (value.values() if isinstance(value, dict) else value))
    if plain and len(indent) + len(flat) <= 100:
        return flat
    inner = indent + "  "
    if isinstance(value, list):
        return "[\n" + ",\n".join(inner + _render(v, inner) for v in value) + f"\n{indent}]"
    assert isinstance(value, dict)
    return "{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {_render(v, inner)}" for k, v in value.items()) + f"\n{indent}}}"


@click.command("init")
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
def init_cmd(folder: Path) -> None:
    """Write a starter hub.json in FOLDER (default: here): the three demo servers, a scripted demo model,
    the data in FOLDER/.data; then `hermes-hub serve --config FOLDER/hub.json`."""
    hub_json, model = folder / "hub.json", folder / MODEL
    for taken in (hub_json, model):
        if taken.exists():
            fail(f"{taken} exists; nothing was written. Init another folder, or move it away", 1)
    folder.mkdir(parents=True, exist_ok=True)
    model.write_bytes(files("hermes_hub.demo").joinpath(MODEL).read_bytes())
    text = _render(starter()) + "\n"
    with open(os.open(hub_json, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "w", encoding="utf-8") as f:
        f.write(text)
    click.echo(f"wrote {hub_json} (the demo servers {', '.join(DEMOS)}; the scripted demo model in {model}; "
               f"data in {folder / '.data'})")
    click.echo(f"next: hermes-hub serve --config {hub_json}   (then: hermes-hub install claude-code "
               f"--config {hub_json})")
