"""The ``_meta`` keys a downstream server may not set: the hub's own and the protocol's.

A host reads some ``_meta`` keys as said by the hub or by the protocol itself: ``hermes-hub/origin``
(which server a tool comes from), ``io.modelcontextprotocol/related-task`` (the task a result belongs
to), ``io.modelcontextprotocol/serverInfo`` and the like. A downstream server that sends them would
speak in the hub's name, so whatever a server hands out (listed tools, resources, templates and
prompts; tool results and their content blocks; resource reads; prompt messages) loses them here,
before the hub sets its own. Every other key (``com.example/x``, the apps extension's ``ui``) passes.

    scrub({"hermes-hub/origin": {...}, "io.modelcontextprotocol/related-task": {...}, "com.example/x": 1})
    # -> {"com.example/x": 1}

Reserved for MCP (the spec's key format): a prefix whose second label is ``modelcontextprotocol`` or
``mcp`` (2025-11-25: ``io.modelcontextprotocol/``, ``dev.mcp/``), or carrying one in a label other than
the last (2025-06-18: ``modelcontextprotocol.io/``). ``com.example.mcp/`` is not reserved.
"""

from __future__ import annotations

from typing import Any, TypeVar

import mcp.types as types

HUB_PREFIX = "hermes-hub/"
_MCP_LABELS = frozenset({"modelcontextprotocol", "mcp"})

T = TypeVar("T")


def is_reserved(key: str) -> bool:
    """Whether ``key`` is the hub's or the protocol's to set."""
    if key.lower().startswith(HUB_PREFIX):
        return True
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.lower().split(".")
    return (len(labels) > 1 and labels[1] in _MCP_LABELS) or any(label in _MCP_LABELS for label in labels[:-1])


def scrub(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """``meta`` without the reserved keys (None once nothing is left)."""
    if not meta or not any(is_reserved(k) for k in meta):
        return meta
    return {k: v for k, v in meta.items() if not is_reserved(k)} or None


def item(value: T) -> T:
    """A listed tool, resource, template or prompt, or a content block, with its ``_meta`` scrubbed."""
    old = getattr(value, "meta", None)
    new = scrub(old)
    changed: dict[str, Any] = {} if new is old else {"meta": new}
    if isinstance(value, types.EmbeddedResource):
        changed["resource"] = item(value.resource)
    if not changed or (changed.keys() == {"resource"} and changed["resource"] is value.resource):
        return value
    return value.model_copy(update=changed)  # type: ignore[attr-defined]


def tool_result(result: T) -> T:
    """A ``tools/call`` result with its own and its content blocks' ``_meta`` scrubbed."""
    if isinstance(result, types.CallToolResult):
        return result.model_copy(update={"meta": scrub(result.meta), "content": [item(c) for c in result.content]})
    return item(result)  # an input-required round: its own _meta


def read_result(result: types.ReadResourceResult) -> types.ReadResourceResult:
    return result.model_copy(update={"meta": scrub(result.meta), "contents": [item(c) for c in result.contents]})


def prompt_result(result: types.GetPromptResult) -> types.GetPromptResult:
    messages = [m.model_copy(update={"content": item(m.content)}) for m in result.messages]
    return result.model_copy(update={"meta": scrub(result.meta), "messages": messages})
