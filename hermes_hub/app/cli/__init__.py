"""``hermes-hub``: serve the hub, and list or call what it (or any one MCP server) offers.

One module per command group; this one only gathers them under ``main`` (the ``hermes-hub`` script
and ``python -m hermes_hub``). Failures exit non-zero with the reason on stderr (``command.py``).
"""

from __future__ import annotations

import logging
import os
import sys

import click

from hermes_hub.app.cli.admin import audit_cmd, token, traces_cmd
from hermes_hub.app.cli.approvals import approvals_cmd, approve_cmd, deny_cmd
from hermes_hub.app.cli.backup import backup_cmd, restore_cmd
from hermes_hub.app.cli.catalog import call, prompt, prompts, read, resources, servers, tools
from hermes_hub.app.cli.chat import chat_cmd
from hermes_hub.app.cli.checks import check
from hermes_hub.app.cli.evaluate import eval_cmd
from hermes_hub.app.cli.events import events_cmd
from hermes_hub.app.cli.init import init_cmd
from hermes_hub.app.cli.install import import_cmd, install
from hermes_hub.app.cli.login import login, logout
from hermes_hub.app.cli.memory import memory
from hermes_hub.app.cli.pins import approve, pin
from hermes_hub.app.cli.schedules import schedules
from hermes_hub.app.cli.secrets import secret
from hermes_hub.app.cli.serve import serve
from hermes_hub.app.cli.session import session
from hermes_hub.app.cli.sessions import sessions
from hermes_hub.app.cli.storage import storage


@click.group()
@click.version_option(package_name="hermes-hub")
def main() -> None:
    """hermes-hub: one MCP server in front of all your MCP servers."""


for command in (init_cmd, serve, check, servers, tools, resources, prompts, call, read, prompt,
                token, audit_cmd, memory, traces_cmd, chat_cmd, install, import_cmd, storage, login, logout, secret,
                session, sessions, approve_cmd, deny_cmd, approvals_cmd, eval_cmd, schedules, events_cmd, backup_cmd, restore_cmd):
    main.add_command(command)


def entry() -> None:
    """The ``hermes-hub`` script (and ``python -m hermes_hub``): ``main``. A command that only asked a served
    hub over HTTP then leaves without the interpreter's teardown, which frees the ~700 modules the MCP SDK
    brings in about 0.4 s that nobody waits for: its output is flushed first, and it opened nothing else."""
    try:
        main()
    except SystemExit as e:
        target = sys.modules.get("hermes_hub.app.cli.target")  # imported by every command that connects
        if target is None or not target.only_asked_over_http():
            raise
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


tools.add_command(pin)  # `hermes-hub tools pin [SERVER]`, `tools approve NAME|SERVER`
tools.add_command(approve)
