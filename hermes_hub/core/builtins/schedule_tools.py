"""``hermes_schedule_create`` / ``_list`` / ``_get`` / ``_update`` / ``_delete``: agent runs at a time, and
``hub://hermes/inbox``: what they answered (newest first; subscribe for ``resources/updated``). Each person
sees and changes only their own schedules; another's id answers "not found"."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import BuiltinResource, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError
from hermes_hub.core.schedules import Inbox, Schedules

ID = {"type": "string", "maxLength": 64, "description": "a schedule id (sch_…) from hermes_schedule_create or _list"}
TIMING = {
    "at": {"type": "string", "maxLength": 64, "description": "once, at this ISO 8601 time (e.g. "
           "2026-12-02T10:00:00+01:00; without an offset it is in 'timezone'); resolve 'tomorrow at ten' first "
           "with hermes_time_resolve"},
    # one type: single-type schema dialects (Gemini's function declarations) refuse ["string", "number"]
    "every": {"type": "string", "maxLength": 32, "description": "repeat at this interval: '15m', '2h', '1d', "
              "'1h30m', or seconds as digits ('3600'); at least a minute"},
    "cron": {"type": "string", "maxLength": 200, "description": "repeat on a five-field cron expression in "
             "'timezone' (minute hour day month weekday), e.g. '30 8 * * 1-5' for weekdays at 08:30"},
    "timezone": {"type": "string", "maxLength": 64, "description": "IANA zone the time means (default: the "
                 "hub's agent.timezone, else UTC), e.g. Europe/Berlin"},
}
OPTIONS = {
    "profile": {"type": "string", "maxLength": 40, "description": "the agent profile to run (default: default)"},
    "session_id": {"type": "string", "maxLength": 64, "description": "run in this session of yours (default: "
                   "a new one for the schedule)"},
    "misfire": {"type": "number", "minimum": 0, "description": "seconds late a run still happens if the hub was "
                "down when it was due (default: schedules.misfire_grace, an hour); later, it is recorded as missed"},
    "jitter": {"type": "number", "minimum": 0, "maximum": 3600, "description": "up to this many seconds added to "
               "each recurring run (default: schedules.jitter, 30)"},
    "retries": {"type": "integer", "minimum": 0, "maximum": 10, "description": "times a failed run is retried "
                "(default: schedules.retries)"},
}
TASK = {"type": "string", "minLength": 1, "maxLength": 20000, "description": "what the agent should do when it is "
        "due, as you would ask a person (e.g. 'remind me to bring the project plan')"}


def schedule_items(book: Callable[[], Schedules], inbox: Callable[[], Inbox]) -> list[BuiltinTool | BuiltinResource]:
    def guarded(body: Callable[[dict[str, Any], CallContext], Any]) -> Any:
        async def handler(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
            try:
                return json_result(await body(args, ctx))
            except HubError as e:  # bad timing, unknown id or profile: the caller can act on these
                return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
        return handler

    async def create(args: dict[str, Any], ctx: CallContext) -> Any:
        return await book().create(ctx.caller, args)

    async def list_(args: dict[str, Any], ctx: CallContext) -> Any:
        return {"schedules": await book().list(ctx.caller)}

    async def get(args: dict[str, Any], ctx: CallContext) -> Any:
        return await book().get(ctx.caller, args["schedule_id"])

    async def update(args: dict[str, Any], ctx: CallContext) -> Any:
        changes = {k: v for k, v in args.items() if k != "schedule_id"}
        return await book().update(ctx.caller, args["schedule_id"], changes)

    async def delete(args: dict[str, Any], ctx: CallContext) -> Any:
        return await book().delete(ctx.caller, args["schedule_id"])

    async def read_inbox(ctx: CallContext) -> str:
        return json.dumps({"items": await book().inbox(ctx.caller)}, ensure_ascii=False, indent=2)

    def tool(name: str, description: str, properties: dict[str, Any], required: list[str], read_only: bool) -> Any:
        return types.Tool(name=name, description=description, input_schema={
            "type": "object", "properties": properties, "required": required, "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=read_only, destructive_hint=name.endswith("delete"),
                                              open_world_hint=False))

    resource = types.Resource(uri="hub://inbox", name="inbox", mime_type="application/json",
                              description="What your schedules' runs answered, newest first: each finished, failed "
                                          "or missed run with its answer, stop reason, error and trace; subscribe to "
                                          "hear of new ones")
    return [
        BuiltinTool(tool("schedule_create", "Run a task with the hub's agent at a time: once ('at'), at an interval "
                         "('every') or on a cron expression ('cron'), as you, in its own session; each run's answer "
                         "lands in hub://hermes/inbox. Returns the schedule with its next run.",
                         {"task": TASK, **TIMING, **OPTIONS}, ["task"], False), guarded(create)),
        BuiltinTool(tool("schedule_list", "Your schedules with their next and last runs.", {}, [], True),
                    guarded(list_)),
        BuiltinTool(tool("schedule_get", "One of your schedules with its recent runs (answer, stop reason, error, "
                         "trace).", {"schedule_id": ID}, ["schedule_id"], True), guarded(get)),
        BuiltinTool(tool("schedule_update", "Change one of your schedules: its task, timing, profile, options, or "
                         "pause it (paused: true) and resume it (paused: false).",
                         {"schedule_id": ID, **{k: {**v, "description": "as in hermes_schedule_create"}
                                                for k, v in {"task": TASK, **TIMING, **OPTIONS}.items()},
                          "paused": {"type": "boolean", "description": "true: stop running it; false: resume"}},
                         ["schedule_id"], False), guarded(update)),
        BuiltinTool(tool("schedule_delete", "Delete one of your schedules and its runs.", {"schedule_id": ID},
                         ["schedule_id"], False), guarded(delete)),
        BuiltinResource(resource, read_inbox,
                        watch=lambda caller, watcher, notify: inbox().watch(caller.user_id, watcher, notify),
                        unwatch=lambda watcher: inbox().unwatch(watcher)),
    ]
