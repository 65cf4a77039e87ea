"""``hermes_time_resolve``: the absolute time(s) an expression means, so tools get ISO 8601 with an offset.

    hermes_time_resolve(text="remind me tomorrow at 10", timezone="Asia/Shanghai")
    -> {"start": "2026-12-02T10:00:00+08:00", "end": "2026-12-02T10:00:00+08:00", "all_day": false, ...}

English and Chinese (``memory/timeparse``: days, weeks, months; ``clock.py``: times of day, "in two
hours", 两小时后). Several expressions give a list. The zone is the argument's, else ``agent.timezone``,
else the machine's; ``now`` (ISO 8601) replaces the current time, for planning ahead and for tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.services.memory.timeparse.clock import MAX_CHARS, When, times
from hermes_hub.services.memory.timeparse.zones import zone, zone_name

DESCRIPTION = (
    "Turn a time expression into absolute ISO 8601 times with the person's UTC offset, before passing a time "
    "to any tool: 'tomorrow at 10', 'next Monday', 'in two hours', '下周一上午十点', '明天下午三点'. Returns "
    "{start, end, all_day} (a list when the text names several times); an instant has end equal to start, a "
    "day or part of a day its span (end exclusive). timezone: an IANA name (default: the person's); now: the "
    "moment to count from (default: the current time).")


def time_items(default_zone: Callable[[], str | None]) -> list[BuiltinTool]:
    """The tool; ``default_zone()`` is the zone used when the call names none (``agent.timezone``)."""
    async def resolve(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            return answer(args, default_zone())
        except ValueError as e:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)

    schema = {"type": "object", "additionalProperties": False, "required": ["text"], "properties": {
        "text": {"type": "string", "maxLength": MAX_CHARS,
                 "description": "the words that name a time, in English or Chinese"},
        "timezone": {"type": "string", "maxLength": 64, "description": "IANA name, e.g. Asia/Shanghai"},
        "now": {"type": "string", "maxLength": 64,
                "description": "ISO 8601; without an offset it is read in the timezone"}}}
    tool = types.Tool(name="time_resolve", description=DESCRIPTION, input_schema=schema,
                      annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True,
                                                        open_world_hint=False))
    return [BuiltinTool(tool, resolve)]


def answer(args: dict[str, Any], default_zone: str | None) -> types.CallToolResult:
    """The tool's result for ``args``; a ValueError says what to change."""
    text, name, raw_now = args.get("text"), args.get("timezone") or default_zone, args.get("now")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must name a time, e.g. 'tomorrow at 10' or '下周一上午十点'")
    tz = zone(name)
    now = datetime.now(tz)
    if raw_now:
        try:
            now = datetime.fromisoformat(str(raw_now))
        except ValueError:
            raise ValueError(f"now {str(raw_now)[:64]!r} is not ISO 8601; write e.g. 2026-12-01T09:00:00+08:00")
        now = now.replace(tzinfo=tz) if now.tzinfo is None else now.astimezone(tz)
    found = times(text, now)
    if not found:
        raise ValueError(f"no time found in {text[:200]!r} (read at {now.isoformat()}, {zone_name(tz)}); "
                         f"give the date and time, e.g. 'tomorrow at 10', 'May 7 at 9:30', '下周一上午十点', "
                         f"or compute the ISO 8601 time yourself")
    rows = [_row(w, tz) for w in found]
    if len(rows) == 1:
        return json_result(rows[0])
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(rows, ensure_ascii=False))],
                                structured_content={"times": rows})


def _row(w: When, tz: Any) -> dict[str, Any]:
    return {"start": w.start.isoformat(), "end": w.end.isoformat(), "all_day": w.all_day, "text": w.text,
            "timezone": zone_name(tz)}
