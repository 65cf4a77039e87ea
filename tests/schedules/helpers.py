"""An in-process hub whose scheduler runs on a clock the test moves, and the calls a person makes to it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from hermes_hub import Hub
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.core.schedules import ManualClock

ANSWERS = [{"when": r"^\[scheduled run of", "text": "Done at its time."}, {"text": "ok"}]


def write_config(tmp_path: Path, rules: list[dict[str, Any]] = ANSWERS, **sections: Any) -> Path:
    (tmp_path / "model.json").write_text(json.dumps(rules))
    config = {"storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "agent": {"provider": "scripted", "script": "model.json"},
              "auth": {"local_user": "ana"}, **sections}
    (tmp_path / "hub.json").write_text(json.dumps(config))
    return tmp_path / "hub.json"


@asynccontextmanager
async def clocked_hub(config: Path, clock: ManualClock) -> AsyncIterator[Hub]:
    hub = Hub.from_file(config)
    hub.scheduling.use_clock(clock)
    async with hub:
        yield hub


async def call(hub: Hub, tool: str, args: dict[str, Any], user: str = "ana", role: str = "admin") -> Any:
    """The tool's JSON answer as ``user``; an error result raises AssertionError with its text."""
    result = await hub.catalog.call_tool(tool, args, CallContext(Identity(user, role)))
    text = result.content[0].text
    if result.is_error:
        raise AssertionError(text)
    return json.loads(text)


async def refused(hub: Hub, tool: str, args: dict[str, Any], user: str = "ana", role: str = "admin") -> str:
    result = await hub.catalog.call_tool(tool, args, CallContext(Identity(user, role)))
    assert result.is_error, result.content[0].text
    return result.content[0].text


async def settle(hub: Hub) -> None:
    """Wait (bounded) until the scheduler has done everything due at its clock's time."""
    with anyio.fail_after(60):
        await hub.scheduling.scheduler.wait_idle()


async def inbox(hub: Hub, user: str = "ana") -> list[dict[str, Any]]:
    return await hub.scheduling.book.inbox(Identity(user))


def ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()
