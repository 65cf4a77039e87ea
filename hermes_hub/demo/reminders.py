"""Demo reminders MCP server: schedule reminders at zone-qualified times, stored in reminders.json."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from hermes_hub.demo.command import serve
from hermes_hub.demo.data import JsonStore, resolve_data_dir

_EXAMPLES = "like 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z"


class Reminder(BaseModel):
    id: str
    content: str
    time_utc: str = Field(description="When the reminder fires, ISO 8601 in UTC (…Z)")


class Reminders(BaseModel):
    reminders: list[Reminder]


def _to_utc(value: str) -> str:
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ToolError(
            f"time must be an ISO 8601 date-time with a timezone offset, {_EXAMPLES}; got {value!r}"
        ) from None
    # A zone-less time is ambiguous: the server's zone is not necessarily the user's.
    if when.tzinfo is None:
        raise ToolError(f"time {value!r} has no timezone offset; add the user's offset, {_EXAMPLES}")
    return when.astimezone(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def build_server(data_dir: Path | None = None) -> MCPServer:
    store = JsonStore(resolve_data_dir(data_dir) / "reminders.json", {"next_id": 1, "reminders": []})
    mcp = MCPServer("reminders", instructions="Reminders at exact times. Always give times with a timezone offset.")

    @mcp.tool()
    def send_reminder(content: str, time: str) -> Reminder:
        """Schedule a reminder; time is ISO 8601 with a timezone offset, e.g. 2026-12-01T09:00:00+01:00."""
        if not content.strip():
            raise ToolError("content must not be empty: say what to remind the user about")
        time_utc = _to_utc(time)
        with store.update() as data:
            reminder = Reminder(id=f"rem-{data['next_id']}", content=content.strip(), time_utc=time_utc)
            data["next_id"] += 1
            data["reminders"].append(reminder.model_dump())
        return reminder

    @mcp.tool()
    def list_reminders() -> Reminders:
        """List all scheduled reminders, earliest first."""
        reminders = [Reminder(**r) for r in store.read()["reminders"]]
        return Reminders(reminders=sorted(reminders, key=lambda r: r.time_utc))

    return mcp


def main(argv: list[str] | None = None, prog: str = "python -m hermes_hub.demo.reminders") -> None:
    serve(build_server, prog, __doc__, argv)


if __name__ == "__main__":
    main()
