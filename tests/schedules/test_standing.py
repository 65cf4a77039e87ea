"""A schedule runs with no more than its creator's role today, read from the live hub tokens the store
holds, whatever made them (issue 30, item 2). A served hub (real `hermes-hub serve`, real SQLite, tokens
made and revoked with the real `hermes-hub token` commands): an admin's schedule calls an admin-only
tool; once she is demoted it no longer can; a person whose every token is revoked gets the run refused,
in the inbox and the audit, and nothing runs."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hermes_hub.infra.storage import open_store
from tests.standing import CARD, cli, token, tokens_before_start
from tests.support import as_user, serve_process, toy, until

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"), pytest.mark.slow]
SCRIPT = [{"when": r"^\[scheduled run of", "tool_calls": [{"name": "vault_echo", "arguments": {"text": CARD}}]},
          {"when": CARD, "text": "the vault answered"},
          {"text": "the vault refused"}]


def config(tmp_path: Any) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(SCRIPT))
    return {"mcpServers": {"alpha": toy("--name", "alpha"), "vault": {**toy("--name", "vault"), "roles": ["admin"]}},
            "memory": {"embedder": "none"}, "auth": {"local_user": "ana"},
            "agent": {"provider": "scripted", "script": str(tmp_path / "model.json")}, "schedules": {"jitter": 0}}


async def schedule(url: str, bearer: str, at: datetime) -> str:
    async with as_user(url, bearer) as host:
        made = await host.call_tool("hermes_schedule_create", {"task": "read the payroll card", "at": at.isoformat()})
    assert not made.is_error, made.content[0].text
    return json.loads(made.content[0].text)["schedule_id"]


async def finished(user: str, schedule_id: str) -> Any:
    """The schedule's finished occurrence, read from the served hub's store (None while there is none)."""
    async with open_store() as store:
        found = await store.occurrences(user, schedule_id=schedule_id, finished=True, limit=1)
    return found[0] if found else None


async def due_now(*schedule_ids: str) -> None:
    """Move the schedules' next run to now, in the store the hub reads (its next look, within seconds)."""
    async with open_store() as store:
        for sid in schedule_ids:
            await store.raw(f"UPDATE schedules SET next_due = {time.time()} WHERE id = '{sid}'", write=True)


async def inbox(url: str, bearer: str) -> list[dict[str, Any]]:
    async with as_user(url, bearer) as host:
        return json.loads((await host.read_resource("hub://hermes/inbox")).contents[0].text)["items"]


async def test_a_demoted_admin_s_schedule_loses_admin_and_a_revoked_person_s_schedule_is_refused(tmp_path):
    cfg = config(tmp_path)
    made = await tokens_before_start(tmp_path, cfg, ("root", "admin"), ("alice", "user"))
    (root, root_id), (alice, alice_id) = made["root"], made["alice"]
    later = datetime.now(UTC) + timedelta(days=1)
    async with serve_process(cfg, tmp_path) as served:
        first = await schedule(served.url, root, datetime.now(UTC) + timedelta(seconds=2))
        assert (await until(lambda: finished("root", first), timeout=60)).answer == "the vault answered"
        hers, theirs = await schedule(served.url, root, later), await schedule(served.url, alice, later)

        demoted, _ = await token(served.config, "root", "user")  # her token re-created as a plain user
        await cli(served.config, "token", "revoke", root_id)
        await cli(served.config, "token", "revoke", alice_id)  # alice has no live token left
        await due_now(hers, theirs)
        ran = await until(lambda: finished("root", hers), timeout=60)
        refused = await until(lambda: finished("alice", theirs), timeout=60)

        assert (ran.state, ran.answer) == ("done", "the vault refused")  # run as a user: vault_echo is not hers
        audit = json.loads(await cli(served.config, "audit", "--user", "root", "--tool", "vault_echo", "--json"))
        assert [row["outcome"] for row in audit] == ["ok"]  # the first run's only

        assert (refused.state, refused.stop_reason, refused.answer, refused.run_id) == ("failed", "refused", None, None)
        assert refused.attempts == 1  # not retried
        assert refused.error.startswith("refused: alice has no live hub token any more (every one revoked, or taken "
                                        "out of hub.json), so nothing runs as them")
        rows = json.loads(await cli(served.config, "audit", "--user", "alice", "--tool", "schedule_refused", "--json"))
        assert [(r["outcome"], r["error"][:40]) for r in rows] == [("refused", refused.error[:40])]
        assert "schedule %s of alice: run" % theirs in served.log.read_text()

        again, _ = await token(served.config, "alice", "user")  # with a token again she reads what happened
        items = await inbox(served.url, again)
        assert [(i["schedule_id"], i["state"], i["stop_reason"]) for i in items] == [(theirs, "failed", "refused")]
        assert [i["answer"] for i in await inbox(served.url, demoted)] == ["the vault refused", "the vault answered"]
