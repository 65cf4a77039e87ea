"""``hermes_docs_*``: the caller's documents as MCP tools and resources, and documents in recall.

Tools: add (text, or a file or URL under ``docs.roots``), list, forget. Resources: the caller's
documents (``hub://hermes/documents``) and each one's text (``hub://hermes/documents/{document_id}``).
``recall_documents`` answers ``hermes_memory_recall`` for ``sources: ["documents"]``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import BuiltinResource, BuiltinTemplate, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.config import HubConfig
from hermes_hub.infra.errors import HubError, InvalidInput
from hermes_hub.services.memory.documents import MAX_QUERY_CHARS, MAX_TEXT_CHARS, DocumentHit, Documents
from hermes_hub.services.memory.formats import FORMATS
from hermes_hub.services.memory.sources import Roots
from hermes_hub.infra.storage.documents import HEADING_SEP

DID = {"type": "string", "description": "a document id (doc_…) from hermes_docs_add or hermes_docs_list"}


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def render_hits(hits: list[DocumentHit], start: int = 1) -> list[str]:
    """Document hits as a person reads them: where each sits (document, heading path, position), then its text."""
    lines = []
    for n, h in enumerate(hits, start=start):
        where = HEADING_SEP.join(h.heading_path) or "(top)"
        lines.append(f"{n}. document \"{h.title}\" § {where} · chunk {h.position}: {h.text}  [{h.document_id}]")
    return lines


def merge(items: list[Any], hits: list[DocumentHit], limit: int) -> list[Any]:
    """Memory or message items and document hits in one list, by reciprocal rank (their scores are on
    different scales), ``limit`` long: first of each, then second of each..."""
    ranked = [(n, 0, i) for n, i in enumerate(items)] + [(n, 1, h) for n, h in enumerate(hits)]
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in ranked[:limit]]


async def recall_with_documents(docs: Documents | None, user_id: str, query: Any, limit: int, items: list[Any],
                                render: Callable[[list[Any]], str]) -> types.CallToolResult:
    """``hermes_memory_recall``'s answer when its sources name ``documents``: ``items`` (memories and
    messages, already found) merged with the documents' hits; ``render`` writes one of ``items``."""
    if docs is None:
        raise InvalidInput("this hub keeps no documents; leave 'documents' out of sources")
    if not isinstance(query, str):
        raise InvalidInput("query must be text")
    hits = await docs.recall(user_id, query, limit=limit)
    merged = merge(items, hits, limit)
    lines = [render_hits([i], n)[0] if isinstance(i, DocumentHit) else f"{n}. " + render([i]).split(". ", 1)[1]
             for n, i in enumerate(merged, start=1)]
    data = {"items": [i.model_dump(mode="json", exclude_none=True) for i in merged]}
    return types.CallToolResult(content=[types.TextContent(type="text", text="\n".join(lines) or "Nothing found.")],
                                structured_content=data)


def docs_items(get: Callable[[], Documents], config: Callable[[], HubConfig]) -> list[
        BuiltinTool | BuiltinResource | BuiltinTemplate]:
    def tool(name: str, description: str, schema: dict[str, Any],
             run: Callable[[Documents, CallContext, dict[str, Any]], Awaitable[Any]], *, read_only: bool = False,
             destructive: bool = False, private: tuple[str, ...] = ()) -> BuiltinTool:
        async def handler(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
            try:
                out = await run(get(), ctx, args)
            except HubError as e:  # outside the roots, too large, not found: the model can act on these
                return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
            return json_result(out)

        notes = types.ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                                      open_world_hint=name == "docs_add")
        return BuiltinTool(types.Tool(name=name, description=description, input_schema=schema, annotations=notes),
                           handler, private=private)

    async def add(d: Documents, ctx: CallContext, a: dict[str, Any]) -> Any:
        cfg = config()
        return await d.add(ctx.caller.user_id, text=a.get("text"), path=a.get("path"), url=a.get("url"),
                           title=a.get("title"), fmt=a.get("format"), shared=bool(a.get("shared", False)),
                           admin=ctx.caller.is_admin, roots=Roots.parse(cfg.docs.roots, cfg.base_dir),
                           max_bytes=cfg.docs.max_bytes, timeout=cfg.docs.timeout)

    async def list_(d: Documents, ctx: CallContext, a: dict[str, Any]) -> Any:
        return await d.listing(ctx.caller.user_id, limit=a.get("limit", 50), cursor=a.get("cursor"))

    async def forget(d: Documents, ctx: CallContext, a: dict[str, Any]) -> Any:
        if a.get("all"):
            return await d.forget_all(ctx.caller.user_id)
        if "document_id" not in a:
            raise InvalidInput("give document_id (one document), or all: true to forget every document you added")
        return await d.forget(ctx.caller.user_id, a["document_id"], admin=ctx.caller.is_admin)

    async def listing_text(ctx: CallContext) -> str:
        return json.dumps(await get().listing(ctx.caller.user_id, limit=200), ensure_ascii=False, indent=2)

    async def one_text(params: dict[str, str], ctx: CallContext) -> str:
        return (await get().get(ctx.caller.user_id, params["document_id"])).text

    return [
        tool("docs_add",
             "Add a document to the user's knowledge, searchable with hermes_memory_recall(sources=['documents']): "
             "its text (Markdown or plain), or a file path or URL the hub may read (hub.json docs.roots); "
             "Markdown, plain text, HTML and PDF. An admin may add a shared one (every user reads it).",
             _schema({"text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
                      "path": {"type": "string", "minLength": 1, "maxLength": 4096},
                      "url": {"type": "string", "minLength": 1, "maxLength": 4096},
                      "title": {"type": "string", "maxLength": 300}, "format": {"enum": list(FORMATS)},
                      "shared": {"type": "boolean", "description": "admins only: every user reads it"}}),
             add, private=("text",)),
        tool("docs_list", "List the user's documents and the shared ones, newest first; page with cursor.",
             _schema({"limit": {"type": "integer", "minimum": 1, "maximum": 200}, "cursor": {"type": "string"}}),
             list_, read_only=True),
        tool("docs_forget", "Forget one document everywhere it is kept (text, chunks, word index, vectors); "
             "all: true forgets every document the user added.",
             _schema({"document_id": DID, "all": {"const": True, "description": "every document, not one"}}),
             forget, destructive=True),
        BuiltinResource(types.Resource(uri="hub://documents", name="documents", mime_type="application/json",
                                       description="Your documents and the shared ones, newest first"), listing_text),
        BuiltinTemplate(types.ResourceTemplate(uri_template="hub://documents/{document_id}", name="document",
                                               mime_type="text/plain", description="One document's text"), one_text),
    ]


__all__ = ["MAX_QUERY_CHARS", "docs_items", "merge", "recall_with_documents", "render_hits"]
