"""MCP Apps (``io.modelcontextprotocol/ui``) through the hub: every URI a server hands out, mapped.

A server names URIs in more places than its resource list: a tool's ``_meta.ui.resourceUri`` (and
the older flat ``_meta["ui/resourceUri"]``), ``resource_link`` and embedded resources in tool
results and prompt messages, and the contents of a read. Each goes through the one reversible
mapping of its server's ``Namespace.uri`` (``ui://weather/view.html`` from server ``weather`` is
``ui://weather/weather/view.html``), so whatever a host is handed, the hub can read back
(``Catalog.route_uri`` reverses it). The scheme stays first, so a ``ui://`` resource stays one, and
a hub behind a hub just adds its own segment. What a UI resource says of itself (``_meta.ui``:
CSP, permissions, domain) passes unchanged.

Visibility: a tool whose ``_meta.ui.visibility`` leaves out ``"model"`` is for its app only. It
stays callable (the host relays the app's ``tools/call``), but nothing the hub offers a model
lists it: the agent loop, lazy search, and hosts that did not negotiate the extension (they would
hand every listed tool to their model). An app calls its server's tools by their own names; the
hub routes such a name when exactly one server with apps has a tool of that name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import mcp.types as types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from hermes_hub.core.aggregation.namespace import Namespace

UI = "ui"
FLAT_RESOURCE_URI = "ui/resourceUri"  # the deprecated flat key; current SDKs still send both
SERVER_SETTINGS: dict[str, Any] = {}  # what the hub, as a server, advertises (no settings defined)

T = TypeVar("T")


def meta(value: dict[str, Any] | None, ns: Namespace) -> dict[str, Any] | None:
    """``_meta`` with the apps extension's URIs mapped; every other key (and ``ui`` key) as it was."""
    if not value or not ns.prefix or (UI not in value and FLAT_RESOURCE_URI not in value):
        return value
    out = dict(value)
    ui = out.get(UI)
    if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str):
        out[UI] = {**ui, "resourceUri": ns.uri(ui["resourceUri"])}
    if isinstance(out.get(FLAT_RESOURCE_URI), str):
        out[FLAT_RESOURCE_URI] = ns.uri(out[FLAT_RESOURCE_URI])
    return out


def with_meta(item: T, ns: Namespace) -> T:
    """A tool, prompt or result whose ``_meta`` names URIs the hub serves."""
    old = getattr(item, "meta", None)
    new = meta(old, ns)
    return item if new is old else item.model_copy(update={"meta": new})  # type: ignore[attr-defined]


def block(content: Any, ns: Namespace) -> Any:
    """A content block with its URI mapped: ``resource_link`` and embedded resources."""
    if isinstance(content, types.ResourceLink):
        return with_meta(content.model_copy(update={"uri": ns.uri(content.uri)}), ns)
    if isinstance(content, types.EmbeddedResource):
        inner = content.resource.model_copy(update={"uri": ns.uri(content.resource.uri)})
        return content.model_copy(update={"resource": inner})
    return content


def _blocks(contents: Iterable[Any], ns: Namespace) -> list[Any]:
    return [block(c, ns) for c in contents]


def tool_result(result: T, ns: Namespace) -> T:
    """A ``tools/call`` result (an input-required round passes as it is)."""
    if not ns.prefix or not isinstance(result, types.CallToolResult):
        return result
    return with_meta(result.model_copy(update={"content": _blocks(result.content, ns)}), ns)


def prompt_result(result: types.GetPromptResult, ns: Namespace) -> types.GetPromptResult:
    if not ns.prefix:
        return result
    messages = [m.model_copy(update={"content": block(m.content, ns)}) for m in result.messages]
    return with_meta(result.model_copy(update={"messages": messages}), ns)


def read_result(result: types.ReadResourceResult, ns: Namespace) -> types.ReadResourceResult:
    """A read's contents under the URIs the hub serves (their ``_meta`` untouched)."""
    if not ns.prefix:
        return result
    return result.model_copy(update={"contents": [c.model_copy(update={"uri": ns.uri(c.uri)})
                                                  for c in result.contents]})


def visibility(tool: types.Tool) -> list[str]:
    """Who may see ``tool``: the extension's ``visibility``, ``["model", "app"]`` when unsaid."""
    ui = (tool.meta or {}).get(UI)
    seen = ui.get("visibility") if isinstance(ui, dict) else None
    if not isinstance(seen, list) or not all(isinstance(v, str) for v in seen):
        return ["model", "app"]
    return seen


def for_model(tool: types.Tool) -> bool:
    """Whether a model may be offered ``tool`` (app-only tools are not)."""
    return "model" in visibility(tool)


def has_app(tool: types.Tool) -> bool:
    ui = (tool.meta or {}).get(UI)
    return (isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str)) or \
        isinstance((tool.meta or {}).get(FLAT_RESOURCE_URI), str)


def renders_apps(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a host negotiated the extension (and so keeps app-only tools from its model itself)."""
    settings = (capabilities.extensions or {}).get(EXTENSION_ID) if capabilities else None
    return isinstance(settings, dict) and APP_MIME_TYPE in (settings.get("mimeTypes") or [])


def own_name(entries: Iterable[Any], name: str, admits: Callable[[str], bool] | None = None) -> Any | None:
    """The catalog entry an app means by its server's own tool ``name``: the one tool of that name on
    a server that serves apps (behind hubs, the one whose public name ends in it), or None.
    ``admits`` (a toolset's scope, by public name) limits where it looks."""
    if not name:
        return None
    named = [e for e in entries if (e.original == name
             or (e.original.endswith(name) and not e.original[-len(name) - 1].isalnum()))
             and (admits is None or admits(e.item.name))]
    found = [e for e in named if any(has_app(t) for t in e.mount.source.tools)]
    exact = [e for e in found if e.original == name]
    return (exact or found)[0] if len(exact or found) == 1 else None
