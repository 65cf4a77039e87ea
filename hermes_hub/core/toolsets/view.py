"""What one endpoint serves of the catalog: a toolset's servers and tool globs, listed whole or lazily.

    view = View(catalog, lambda: Scope.of(config.toolsets["work"]), index, public_names)
    build_server(view, ...)        # the upstream server reads tools through the view

The hub's own tools are one more source, ``hermes`` (every built-in registered in ``builtins``): a
toolset chooses them like any server's (``"servers": ["hermes", "git"]``, or single tools by glob in
its ``tools`` filter); one whose ``servers`` leaves ``hermes`` out gets none of them but those
``hub.always`` names. Of the own tools in scope only those ``hub.own_tools`` names are listed (by default
a few: remember, recall, the agent run, session search); the others are still called by name and found
by the lazy search, at no cost to a host's context. A toolset naming ``hermes`` lists all of them.
A lazy view lists ``tools_search``, ``tools_describe`` and ``tools_call`` plus
only what ``hub.always`` and ``hub.own_tools`` name; every other tool in scope stays findable and callable through them;
a call through ``tools_call`` is the catalog's own ``call_tool`` for the real tool (validation,
roles, audit under the real name, progress and questions relayed), so it returns exactly what a
direct call returns. A tool outside the view, or one the caller may not use, is never found,
described or called. Resources and prompts are the catalog's, limited to the view's servers for reading, subscribing,
getting and completing as for listing.

The view is an explicit interface (``upstream.server.Surface``): it forwards nothing it does not
define, so a member added to ``Catalog`` is never served unscoped on a toolset endpoint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp.types as types

from hermes_hub.core.aggregation import apps, personal
from hermes_hub.core.aggregation.arguments import ArgumentCheck
from hermes_hub.core.aggregation.catalog import Catalog, Entry, error_result
from hermes_hub.core.aggregation.filters import NameFilter
from hermes_hub.core.aggregation.hints import LIST_KINDS, NOBODY, Hint, merged, same_for_everyone
from hermes_hub.core.aggregation.results import json_result
from hermes_hub.infra.call import CallContext, Identity, require, require_identity
from hermes_hub.infra.errors import UnknownName
from hermes_hub.core.toolsets.deferral import HostHints, defers
from hermes_hub.core.toolsets.meta import CALL, DESCRIBE, SEARCH, meta_tools
from hermes_hub.core.toolsets.search import ToolIndex

if TYPE_CHECKING:
    from hermes_hub.infra.config import ToolsetConfig

NOTHING = NameFilter(allow=())


@dataclass(frozen=True)
class Scope:
    servers: frozenset[str] | None = None  # None: every server
    tools: NameFilter = field(default_factory=NameFilter)  # over public names
    lazy: bool = False
    always: NameFilter = NOTHING  # hub.always: listed even lazily, in every toolset whatever its servers
    cache_ttl_ms: int = 0  # hub.cache_ttl_ms: what the hub vouches for a list part without a hint of its own
    # hub.own_tools: which of the hub's own tools (the source ``own_source``) are listed; the rest stay in
    # scope, so they are called by name and found by the lazy search, but cost a host no context
    own: NameFilter = field(default_factory=NameFilter)
    own_source: str | None = None

    @classmethod
    def of(cls, ts: ToolsetConfig, always: Sequence[str] = (), cache_ttl_ms: int = 0,
           own: NameFilter = NameFilter(), own_source: str | None = None) -> Scope:
        """A toolset's scope. One that names the own source in ``servers``, or picks tools by glob in ``tools``,
        chose its own tools itself: it lists every one it admits (but lazily, which lists only ``own``); one that
        takes every server lists ``own`` (hub.own_tools), as ``/mcp`` does."""
        servers = None if ts.servers is None else frozenset(ts.servers)
        lazy = ts.expose == "lazy"
        if ((servers is not None and own_source in servers) or ts.tools.allow is not None) and not lazy:
            own = NameFilter()
        return cls(servers, NameFilter.of(ts.tools.allow, ts.tools.deny), lazy, NameFilter.of(always), cache_ttl_ms,
                   own, own_source)

    @property
    def everything(self) -> bool:
        return self.servers is None and self.tools == NameFilter()

    def admits(self, entry: Entry, public: str) -> bool:
        return ((self.servers is None or entry.mount.source.name in self.servers or self.always(public))
                and self.tools(public))

    def lists(self, entry: Entry, public: str, *, lazy: bool | None = None) -> bool:
        """Whether tools/list names this tool (``lazy``: as a lazy listing would, beside the meta-tools)."""
        if not self.admits(entry, public):
            return False
        own = self.own_source is not None and entry.mount.source.name == self.own_source
        if self.lazy if lazy is None else lazy:
            return self.always(public) or (own and self.own(public))
        return not own or self.own(public) or self.always(public)


class View:
    def __init__(self, catalog: Catalog, scope: Callable[[], Scope], index: ToolIndex,
                 public: Callable[[str], str], name: str | None = None, hints: HostHints | None = None) -> None:
        self.catalog, self.scope, self.index, self.name, self.hints = catalog, scope, index, name, hints
        self.meta_names = {kind: public(kind) for kind in (SEARCH, DESCRIBE, CALL)}
        self.meta = meta_tools(self.meta_names)
        self._meta_by_name = {t.name: t for t in self.meta}
        self._checks = {t.name: ArgumentCheck(t.name, t.input_schema) for t in self.meta}
        self._fingerprint: int | None = None
        self._parts: dict[tuple[str, bool], tuple[Any, list[Any], bool]] = {}  # (method, lazy) -> (generation,
        # parts, same for everyone)

    # -- what the upstream server reads beside its handlers -----------------------------------

    @property
    def generation(self) -> tuple[int, Scope]:
        """Changes with the catalog and with this view's scope (a reload may change a toolset alone),
        so a listing kept for this endpoint (``ListingMemo``) is never served past either."""
        return self.catalog.generation, self.scope()

    @property
    def prompts(self) -> dict[str, Entry]:
        return self._of_servers(self.catalog.prompts)

    @property
    def resources(self) -> dict[str, Entry]:
        return self._of_servers(self.catalog.resources)

    @property
    def templates(self) -> dict[str, Entry]:
        return self._of_servers(self.catalog.templates)

    def _of_servers(self, index: dict[str, Entry]) -> dict[str, Entry]:
        servers = self.scope().servers
        if servers is None:
            return index
        return {k: e for k, e in index.items() if e.mount.source.name in servers}

    # -- listing ---------------------------------------------------------------------------

    def tools_in_scope(self, caller: Identity) -> list[types.Tool]:
        """Every tool of this view ``caller`` may use (what a lazy view searches)."""
        tools = self.catalog.list_tools(caller)
        scope = self.scope()
        if scope.everything:
            return tools
        entries = self.catalog.index_of(caller).tools  # their own listing of a per_user server, if they have one
        return [t for t in tools if scope.admits(entries[t.name], t.name)]

    def for_model(self, caller: Identity) -> list[types.Tool]:
        """What lazy search and describe offer a model: the view's tools but those only apps call."""
        return [t for t in self.tools_in_scope(caller) if apps.for_model(t)]

    def list_tools(self, caller: Identity, defers: bool = False) -> list[types.Tool]:
        """What tools/list names: lazily the meta-tools and a few, but not to a host that ``defers`` (it finds
        tools by its own search, so it is listed the tools themselves); each with its hints for such hosts."""
        scope = self.scope()
        lazy = scope.lazy and not defers
        if not lazy and scope.own == NameFilter():  # every tool in scope is listed
            tools = self.tools_in_scope(caller)
        else:
            tools = self._listed(caller, lazy) + (self.meta if lazy else [])
        return tools if self.hints is None else self.hints.apply(tools, caller.user_id)

    def defers(self, client_name: str | None) -> bool:
        """Whether a host of this ``clientInfo.name`` loads tools through its own search (``deferral.py``)."""
        return self.hints is not None and defers(client_name, self.hints.policy().deferring_hosts)

    def always_listed(self, caller: Identity) -> list[types.Tool]:
        """What a lazy view lists ``caller`` besides the meta-tools (in catalog order): the tools ``hub.always``
        names and the own tools ``hub.own_tools`` lists."""
        return self._listed(caller, lazy=True)

    def _listed(self, caller: Identity, lazy: bool) -> list[types.Tool]:
        scope = self.scope()
        entries = self.catalog.index_of(caller).tools
        return [t for t in self.tools_in_scope(caller) if scope.lists(entries[t.name], t.name, lazy=lazy)]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        if (meta := self._meta_by_name.get(name)) is not None and self.scope().lazy:
            return meta.input_schema
        entry = self.catalog.tools.get(name)
        return entry.item.input_schema if entry and self.scope().admits(entry, name) else None

    def task_support(self, name: str) -> str | None:
        """The ``execution.taskSupport`` of the tool ``name`` serves here, if it says (see task_protocol.py)."""
        entry = self.catalog.tools.get(name)
        if entry is None or not self.scope().admits(entry, name) or entry.item.execution is None:
            return None
        return entry.item.execution.task_support

    def listed(self, kind: str, caller: Identity) -> list[Any]:
        """``caller``'s ``kind`` ("resources", "templates", "prompts") here: with their own listing of a
        ``per_user`` server where they have one (``Catalog.index_of``)."""
        return self.visible(getattr(self.catalog.index_of(require_identity(caller)), kind), caller)

    def listing_key(self, caller: Identity) -> str | None:
        """Whom ``caller``'s lists are particular to: their own per_user listings, and their daily tools."""
        key = self.catalog.listing_key(caller)
        daily = self.hints.key(caller.user_id) if self.hints is not None else ()
        return key if not daily else f"{key}|{caller.user_id}|{' '.join(daily)}"

    def visible(self, index: dict[str, Entry], caller: Identity) -> list[Any]:
        require_identity(caller)
        servers = self.scope().servers
        return [e.item for e in index.values()
                if e.mount.serves(caller) and (servers is None or e.mount.source.name in servers)]

    def cache_hint(self, method: str, caller: Identity, defers: bool = False) -> Hint:
        """The ``ttlMs``/``cacheScope`` of this view's ``method`` list (``aggregation/hints.py``): its parts
        are the ready servers it draws on, found once per catalog generation; their hints are read live."""
        require_identity(caller)
        generation, scope = self.generation, self.scope()
        lazy = scope.lazy and not defers
        kept = self._parts.get((method, lazy))
        if kept is None or kept[0] != generation:
            kind = LIST_KINDS[method]
            index = {"tools": self.catalog.tools, "resources": self.catalog.resources,
                     "templates": self.catalog.templates, "prompts": self.catalog.prompts}[kind]
            if kind == "tools":
                entries = [e for n, e in index.items() if scope.lists(e, n, lazy=lazy)]
            else:
                entries = list(self._of_servers(index).values())
            parts = {id(e.mount): e.mount for e in entries}
            if not (kind == "tools" and lazy):  # a ready server with nothing listed now is a part too
                parts.update({id(m): m for m in self.catalog.mounts if m.source.ready
                              and (scope.servers is None or m.source.name in scope.servers)})
            shared = same_for_everyone(entries, kind) and all(m.serves(NOBODY) and not personal.is_per_user(m)
                                                              for m in parts.values())  # a user's own: private
            kept = self._parts[(method, lazy)] = (generation, list(parts.values()), shared)
        personal_hints = LIST_KINDS[method] == "tools" and self.hints is not None and self.hints.key(caller.user_id)
        hint = merged(kept[1], method, vouch_ms=scope.cache_ttl_ms, shared=kept[2] and not personal_hints)
        # a server of this view that is not READY will add to the list when it comes up (or back): a list
        # served meanwhile is vouched for no time, or a 2026-07-28 host that does not listen would keep it
        if any(not m.source.ready and (scope.servers is None or m.source.name in scope.servers)
               for m in self.catalog.mounts):
            hint = Hint(0, hint.scope)
        return hint

    def tools_changed(self) -> bool:
        """Whether the tools in this view (for anyone) changed since last asked: its list_changed."""
        scope = self.scope()
        fp = hash((tuple((n, e.item.description, json.dumps(e.item.input_schema, sort_keys=True))
                         for n, e in self.catalog.tools.items() if scope.admits(e, n)),
                   personal.fingerprint(self.catalog.mounts)))  # a user's own listing came, went or changed
        changed, self._fingerprint = fp != self._fingerprint, fp
        return changed

    # -- resources and prompts of the view's servers only ------------------------------------

    def _in_scope(self, entry_source: str | None, kind: str, name: str) -> None:
        servers = self.scope().servers
        if servers is not None and entry_source is not None and entry_source not in servers:
            raise UnknownName(kind, name, f"call {'prompts' if kind == 'prompt' else 'resources'}/list for what this "
                                          f"endpoint serves")

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        mount = self.catalog.route_uri(uri, ctx.caller)[0]
        self._in_scope(mount.source.name, "resource", uri)
        result = await self.catalog.read_resource(uri, ctx)  # the server's own cache hint passes through ...
        if result.cache_scope == "public" and not mount.serves(NOBODY):  # ... never public if roles limit it
            result = result.model_copy(update={"cache_scope": "private"})
        return result

    async def subscribe(self, uri: str, watcher: Any, notify: Any, ctx: CallContext) -> None:
        self._in_scope(self.catalog.route_uri(uri, ctx.caller)[0].source.name, "resource", uri)
        await self.catalog.subscribe(uri, watcher, notify, ctx)

    async def unsubscribe(self, uri: str, watcher: Any) -> None:
        # Unscoped on purpose: it only drops a subscription this endpoint's host made, and must still
        # do so after a reload took the resource's server out of the toolset.
        await self.catalog.unsubscribe(uri, watcher)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None, ctx: CallContext) -> types.GetPromptResult:
        entry = self.catalog.index_of(ctx.caller).prompts.get(name)
        self._in_scope(entry.mount.source.name if entry else None, "prompt", name)
        return await self.catalog.get_prompt(name, arguments, ctx)

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult:
        prompt = isinstance(ref, types.PromptReference)
        index = self.catalog.index_of(ctx.caller)
        entry = index.prompts.get(ref.name) if prompt else index.templates.get(ref.uri)
        self._in_scope(entry.mount.source.name if entry else None, "prompt" if prompt else "resource template",
                       ref.name if prompt else ref.uri)
        return await self.catalog.complete(ref, argument, context, ctx)

    # -- calling ---------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
                        ) -> types.CallToolResult | types.InputRequiredResult:
        require(ctx)
        scope = self.scope()
        if scope.lazy and name in self._meta_by_name:
            if problems := self._checks[name].problems(arguments or {}):
                listing = "\n".join(f"- {p}" for p in problems)
                return error_result(f"Invalid arguments for tool '{name}':\n{listing}\nFix these and call the "
                                    f"tool again.")
            return await self._meta(name, arguments or {}, ctx)
        entry = self.catalog.index_of(ctx.caller).tools.get(name)
        if entry is not None and not scope.admits(entry, name):
            raise UnknownName("tool", name, "call tools/list for the current names (each is prefixed by its server)")
        if not scope.everything:  # what this call reaches in turn (an agent run) stays within the toolset
            ctx = ctx.replace(in_scope=self._admits_for(ctx.caller))
        return await self.catalog.call_tool(name, arguments, ctx)

    def _admits_for(self, caller: Identity) -> Callable[[str], bool]:
        def admits(name: str) -> bool:
            entry = self.catalog.index_of(caller).tools.get(name)
            return entry is not None and self.scope().admits(entry, name)
        return admits

    async def _meta(self, name: str, args: dict[str, Any], ctx: CallContext,
                    ) -> types.CallToolResult | types.InputRequiredResult:
        search, describe = self.meta_names[SEARCH], self.meta_names[DESCRIBE]
        if name == search:
            hits = await self.index.search(self.for_model(ctx.caller), args["query"], args.get("limit", 5))
            return json_result({"tools": [h.as_dict() for h in hits]})
        if name == describe:
            mine = {t.name: t for t in self.for_model(ctx.caller)}
            found = [mine[n].model_dump(by_alias=True, exclude_none=True, mode="json") for n in args["names"] if n in mine]
            unknown = [n for n in args["names"] if n not in mine]
            data: dict[str, Any] = {"tools": found}
            if unknown:
                data["unknown"] = unknown
                data["hint"] = f"no such tools here; find tools with {search}"
            return json_result(data)
        target = args["name"]
        if target in self._meta_by_name:
            return error_result(f"'{target}' is one of the meta-tools; call it directly, not through '{name}'.")
        entry = self.catalog.index_of(ctx.caller).tools.get(target)
        if entry is not None and not self.scope().admits(entry, target):
            raise UnknownName("tool", target, f"find the tools you can call with {search}")
        if entry is not None and not apps.for_model(entry.item):  # the meta-tools are a model's way in
            return error_result(f"'{target}' is for its app's view only (its _meta.ui.visibility leaves out "
                                f"\"model\"); find the tools you can call with {search}.")
        if not self.scope().everything:
            ctx = ctx.replace(in_scope=self._admits_for(ctx.caller))
        return await self.catalog.call_tool(target, args.get("arguments") or {}, ctx)
