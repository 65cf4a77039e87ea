"""Demo calendar MCP server: query and create events, stored in calendar.json."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from hermes_hub.demo.command import serve
from hermes_hub.demo.data import JsonStore, resolve_data_dir

# date.fromisoformat also takes forms like 20261201 or 2026-W48-1; accept only the one we document.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}")


class Event(BaseModel):
    id: str
    title: str
    date: str = Field(description="YYYY-MM-DD")
    time: str | None = Field(description="HH:MM (24-hour), or null for an all-day event")
    duration_minutes: int


class Events(BaseModel):
    events: list[Event]


def _parse_date(name: str, value: str) -> dt.date:
    try:
        if _DATE.fullmatch(value):
            return dt.date.fromisoformat(value)
    except ValueError:
        pass
    raise ToolError(f"{name} must be an ISO 8601 date like 2026-12-01, got {value!r}")


def _check_time(value: str) -> None:
    try:
        if _TIME.fullmatch(value):
            dt.time.fromisoformat(value)
            return
    except ValueError:
        pass
    raise ToolError(f"time must be a 24-hour time HH:MM like 09:30, or omitted for an all-day event; got {value!r}")


def build_server(data_dir: Path | None = None) -> MCPServer:
    store = JsonStore(resolve_data_dir(data_dir) / "calendar.json", {"next_id": 1, "events": []})
    mcp = MCPServer("calendar", instructions="A personal calendar. Dates are ISO 8601 (YYYY-MM-DD).")

    @mcp.tool()
    def query(start_date: str, end_date: str) -> Events:
        """List the events between start_date and end_date inclusive (both YYYY-MM-DD)."""
        start, end = _parse_date("start_date", start_date), _parse_date("end_date", end_date)
        if end < start:
            raise ToolError(f"end_date {end_date} is before start_date {start_date}; pass an end_date on or after it")
        events = [Event(**e) for e in store.read()["events"] if start_date <= e["date"] <= end_date]
        return Events(events=sorted(events, key=lambda e: (e.date, e.time or "")))

    @mcp.tool()
    def create_event(title: str, date: str, time: str | None = None, duration_minutes: int = 60) -> Event:
        """Create an event on date (YYYY-MM-DD), at time (HH:MM, 24-hour) or all day if time is omitted."""
        if not title.strip():
            raise ToolError("title must not be empty: give the event a short title")
        _parse_date("date", date)
        if time is not None:
            _check_time(time)
        if duration_minutes <= 0:
            raise ToolError(f"duration_minutes must be a positive number of minutes like 30, got {duration_minutes}")
        with store.update() as data:
            event_id = f"evt-{data['next_id']}"
            event = Event(id=event_id, title=title.strip(), date=date, time=time, duration_minutes=duration_minutes)
            data["next_id"] += 1
            data["events"].append(event.model_dump())
        return event

    return mcp


def main(argv: list[str] | None = None, prog: str = "python -m hermes_hub.demo.calendar") -> None:
    serve(build_server, prog, __doc__, argv)


if __name__ == "__main__":
    main()
