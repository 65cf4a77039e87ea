"""``hermes_session_*``: conversations kept by the hub, always the caller's own.

Tools: create, list, history, append, import, search, rename, delete, delete_all, note, working. Resources:
the caller's session list (``hub://hermes/sessions``), each transcript (``hub://hermes/sessions/{session_id}``)
and each working memory (``hub://hermes/sessions/{session_id}/working``).
Another user's session id answers "not found", exactly like an id that never existed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import DEPRECATED, BuiltinResource, BuiltinTemplate, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError, InvalidInput
from hermes_hub.services.memory.working import MAX_CHARS as WORKING_CHARS
from hermes_hub.services.memory.working import NOTE_CHARS, WorkingMemory
from hermes_hub.services.sessions import MAX_IMPORT_MESSAGES, Sessions

SID = {"type": "string", "description": "a session id from hermes_session_create or hermes_session_list"}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 200, "description": "page size"}
CURSOR = {"type": "string", "description": "next_cursor of the previous page"}
ROLE = {"type": "string", "enum": ["system", "user", "assistant", "tool"]}
TOOL_CALL = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "arguments": {"type": "object"}},
    "required": ["id", "name"],
}
CREATED_AT = {"type": "string", "description": "ISO 8601, e.g. 2023-05-07T14:30:00+02:00 (no offset: UTC)"}
MESSAGE = {
    "type": "object",
    "properties": {"role": ROLE, "content": {"type": "string"}, "created_at": CREATED_AT,
                   "tool_calls": {"type": "array", "items": TOOL_CALL}, "tool_call_id": {"type": "string"},
                   "metadata": {"type": "object"}},
    "required": ["role", "content"],
    "additionalProperties": False,
}


def _schema(properties: dict[str, Any], required: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def _tool(name: str, description: str, schema: dict[str, Any], run: Callable[[str, dict[str, Any]], Awaitable[Any]],
          *, read_only: bool = False, destructive: bool = False) -> BuiltinTool:
    async def handler(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            out = await run(ctx.caller.user_id, args)
        except HubError as e:  # not found, invalid input, session busy: the model can act on these
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
        return json_result(out.model_dump(mode="json") if hasattr(out, "model_dump") else out)

    annotations = types.ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive, open_world_hint=False)
    return BuiltinTool(types.Tool(name=name, description=description, input_schema=schema, annotations=annotations),
                       handler)


def session_items(get: Callable[[], Sessions]) -> list[BuiltinTool | BuiltinResource | BuiltinTemplate]:
    """The session tools and resources over the hub's ``Sessions`` (looked up per call: opened on start)."""
    return [*_conversation_tools(get), *_keeping_tools(get), *_session_resources(get)]


def _conversation_tools(get: Callable[[], Sessions]) -> list[BuiltinTool]:
    """Sessions and their messages: create, list, read, append, import, search."""

    async def create(uid: str, a: dict[str, Any]) -> Any:
        return await get().create(uid, a.get("title", ""))

    async def list_(uid: str, a: dict[str, Any]) -> Any:
        return await get().list(uid, limit=a.get("limit", 20), cursor=a.get("cursor"))

    async def history(uid: str, a: dict[str, Any]) -> Any:
        return await get().history(uid, a["session_id"], limit=a.get("limit", 50), cursor=a.get("cursor"),
                                   newest_first=a.get("newest_first", False))

    async def append(uid: str, a: dict[str, Any]) -> Any:
        return await get().append(uid, a["session_id"], role=a["role"], content=a["content"],
                                  tool_calls=a.get("tool_calls"), tool_call_id=a.get("tool_call_id"),
                                  metadata=a.get("metadata"), created_at=a.get("created_at"))

    async def import_(uid: str, a: dict[str, Any]) -> Any:
        session = await get().import_session(uid, a.get("title", ""), a["messages"])
        return {"session_id": session.session_id, "messages": session.message_count}

    async def search(uid: str, a: dict[str, Any]) -> Any:
        hits = await get().search(uid, a["query"], limit=a.get("limit", 20), session_id=a.get("session_id"))
        return {"results": [h.model_dump(mode="json") for h in hits]}

    return [
        _tool("session_create", "Start a new conversation session; returns its id.",
              _schema({"title": {"type": "string", "maxLength": 200}}), create),
        _tool("session_list", "List your sessions, most recently updated first.",
              _schema({"limit": LIMIT, "cursor": CURSOR}), list_, read_only=True),
        _tool("session_history", "Read a session's messages in order, tool calls included; page with cursor.",
              _schema({"session_id": SID, "limit": LIMIT, "cursor": CURSOR, "newest_first": {"type": "boolean"}},
                      ["session_id"]), history, read_only=True),
        _tool("session_append", "Append one message (system, user, assistant or tool) to a session; created_at is "
                                "when the message was said (default now). Messages keep the order appended.",
              _schema({"session_id": SID, **MESSAGE["properties"]}, ["session_id", "role", "content"]), append),
        _tool("session_import", "Import a whole conversation from elsewhere as a new session, all or nothing. "
                                "created_at is when a message was said (default: the time of the one before). "
                                f"At most {MAX_IMPORT_MESSAGES:,} messages.",
              _schema({"title": {"type": "string", "maxLength": 200},
                       "messages": {"type": "array", "minItems": 1, "items": MESSAGE}}, ["title", "messages"]),
              import_),
        _tool("session_search", "Full-text search over your sessions (any language); returns snippets.",
              _schema({"query": {"type": "string", "minLength": 1}, "limit": LIMIT, "session_id": SID}, ["query"]),
              search, read_only=True),
    ]


def _keeping_tools(get: Callable[[], Sessions]) -> list[BuiltinTool]:
    """A session's title, its deletion and its working memory."""

    async def rename(uid: str, a: dict[str, Any]) -> Any:
        return await get().rename(uid, a["session_id"], a["title"])

    async def delete(uid: str, a: dict[str, Any]) -> Any:
        if a.get("all"):
            return {"deleted": await get().delete_all(uid)}
        if "session_id" not in a:
            raise InvalidInput("give session_id (one session), or all: true to delete every one of your sessions")
        await get().delete(uid, a["session_id"])
        return {"deleted": a["session_id"]}

    async def delete_all(uid: str, a: dict[str, Any]) -> Any:
        return {"deleted": await get().delete_all(uid)}

    async def note(uid: str, a: dict[str, Any]) -> Any:
        return await WorkingMemory(get().store).note(uid, a["session_id"], a["note"])

    async def working(uid: str, a: dict[str, Any]) -> Any:
        memory = WorkingMemory(get().store)
        return await memory.set(uid, a["session_id"], a["text"]) if "text" in a else await memory.get(
            uid, a["session_id"])

    return [
        _tool("session_rename", "Give a session a new title.",
              _schema({"session_id": SID, "title": {"type": "string", "maxLength": 200}}, ["session_id", "title"]),
              rename),
        _tool("session_delete", "Delete one session and all its messages; all: true deletes every one of your "
                                "sessions.",
              _schema({"session_id": SID, "all": {"const": True, "description": "every session, not one"}}),
              delete, destructive=True),
        _tool("session_delete_all", f"Delete every one of your sessions. Pass confirm: true. {DEPRECATED}"
              "hermes_session_delete with all: true.",
              _schema({"confirm": {"const": True}}, ["confirm"]), delete_all, destructive=True),
        _tool("session_note", "Note what matters for the task in progress in the session's working memory (e.g. "
                              "'the meeting is with Wang, not Li'): every later run of the session sees it, even "
                              "after it leaves the window; it is not long-term memory and goes with the session.",
              _schema({"session_id": SID, "note": {"type": "string", "minLength": 1, "maxLength": NOTE_CHARS}},
                      ["session_id", "note"]), note),
        _tool("session_working", "Read a session's working memory, or replace it with text (an empty string "
                                 "clears it).",
              _schema({"session_id": SID, "text": {"type": "string", "maxLength": WORKING_CHARS}}, ["session_id"]),
              working),
    ]


def _session_resources(get: Callable[[], Sessions]) -> list[BuiltinResource | BuiltinTemplate]:
    """hub://sessions, a session's transcript and its working memory, as resources."""

    async def working_text(params: dict[str, str], ctx: CallContext) -> str:
        found = await WorkingMemory(get().store).get(ctx.caller.user_id, params["session_id"])
        return json.dumps(found, indent=2, ensure_ascii=False)

    async def list_text(ctx: CallContext) -> str:
        page = await get().list(ctx.caller.user_id, limit=200)
        return json.dumps(page.model_dump(mode="json"), indent=2, ensure_ascii=False)

    async def transcript(params: dict[str, str], ctx: CallContext) -> str:
        page = await get().history(ctx.caller.user_id, params["session_id"], limit=200)
        return json.dumps(page.model_dump(mode="json"), indent=2, ensure_ascii=False)

    return [
        BuiltinResource(types.Resource(uri="hub://sessions", name="sessions", mime_type="application/json",
                                       description="Your sessions, most recently updated first"), list_text),
        BuiltinTemplate(types.ResourceTemplate(uri_template="hub://sessions/{session_id}", name="session transcript",
                                               mime_type="application/json",
                                               description="The first 200 messages of one of your sessions"),
                        transcript),
        BuiltinTemplate(types.ResourceTemplate(uri_template="hub://sessions/{session_id}/working",
                                               name="session working memory", mime_type="application/json",
                                               description="What matters for the task in progress in one of your "
                                                           "sessions, shown to each of its runs"), working_text),
    ]
