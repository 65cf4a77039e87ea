"""``hermes-hub schedules`` lists and edits a person's schedules from the terminal, with messages to act on."""

from __future__ import annotations

import json

import anyio
from click.testing import CliRunner

from hermes_hub.infra.call import Identity
from hermes_hub.app.cli import main
from hermes_hub.infra.config import load_config
from hermes_hub.core.schedules import Clock, Schedules
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import open_store
from tests.schedules.helpers import write_config


async def made_by_the_agent(config: str) -> None:
    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        book = Schedules(lambda: store, lambda: cfg, Clock(), Sessions(store).get)
        await book.create(Identity("ana"), {"task": "summarise my calendar", "cron": "30 8 * * 1-5",
                                            "timezone": "Europe/Berlin"})


def test_the_terminal_lists_pauses_resumes_and_deletes_a_schedule_and_names_a_wrong_id(tmp_path):
    config = str(write_config(tmp_path))
    cli = CliRunner()
    assert "no schedules for ana" in cli.invoke(main, ["schedules", "--config", config]).output
    anyio.run(made_by_the_agent, config)
    [row] = json.loads(cli.invoke(main, ["schedules", "--json", "--config", config]).output)
    sid = row["schedule_id"]
    assert (row["cron"], row["state"], row["next_run"][11:]) == ("30 8 * * 1-5", "active", "08:30:00+01:00")
    table = cli.invoke(main, ["schedules", "--config", config]).output
    assert sid in table and "cron 30 8 * * 1-5" in table and "Europe/Berlin" in table
    assert cli.invoke(main, ["schedules", "pause", sid, "--config", config]).output.strip() == f"{sid}: paused"
    resumed = cli.invoke(main, ["schedules", "resume", sid, "--config", config]).output
    assert resumed.startswith(f"{sid}: active, next run ") and "08:30:00+01:00" in resumed
    wrong = cli.invoke(main, ["schedules", "delete", "sch_nope", "--config", config])
    assert wrong.exit_code == 1 and "schedule 'sch_nope' not found" in wrong.output
    assert cli.invoke(main, ["schedules", "delete", sid, "--config", config]).output.strip() == f"deleted {sid}"
    assert cli.invoke(main, ["schedules", "--user", "bob", "--config", config]).output.strip().startswith(
        "no schedules for bob")
    assert "the inbox of ana is empty" in cli.invoke(main, ["schedules", "inbox", "--config", config]).output
