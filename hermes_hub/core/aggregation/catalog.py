"""The merged catalog: every mounted source's tools, resources and prompts under public names.

A *mount* is a source (a downstream connection or the hub's built-in tools) plus its namespace and
tool filter. ``rebuild()`` recomputes the public index from the sources that are ready; lookups
route a public name back to ``(source, original name)``. Collisions never abort: the first mount
in config order wins, the loser is recorded with the fix.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import anyio
import mcp.types as types

from hermes_hub.core.aggregation import apps, listing, personal, reserved
from hermes_hub.core.aggregation.listing import MAX_DESCRIPTION_CHARS, ORIGIN_META  # noqa: F401 - re-exported
from hermes_hub.core.aggregation.shaping import Withheld, refusal, shaped
from hermes_hub.core.aggregation.mounts import Collision, Entry, Mount  # Mount, Entry: re-exported
from hermes_hub.core.aggregation.suggestions import did_you_mean
from hermes_hub.core.aggregation.truncation import fit_result, rough_size
from hermes_hub.infra.call import CallContext, Identity, require, require_identity
from hermes_hub.core.pipeline import Call, Pipeline
from hermes_hub.infra.errors import DownstreamError, HubError, ServerNotReady, UnknownName

log = logging.getLogger("hermes_hub.catalog")


class Outcome(Protocol):
    """What the audit learns about a call from inside it (see ``hermes_hub.services.audit.Recording``)."""

    result_size: int | None
    call_id: str | None

    def tool_error(self, text: str) -> None: ...
    def refused(self, text: str) -> None: ...


class _Unrecorded:
    result_size: int | None = None
    call_id: str | None = None

    def tool_error(self, text: str) -> None: ...
    def refused(self, text: str) -> None: ...


@asynccontextmanager
async def _no_audit(**_: Any) -> AsyncIterator[Outcome]:
    yield _Unrecorded()


Auditor = Callable[..., AbstractAsyncContextManager[Outcome]]


class Catalog:
    """``auditor(caller=, tool=, server=, arguments=)`` wraps every call (see ``hermes_hub.services.audit.record``);
    inside it, ``pipeline`` runs its steps around each call of an existing tool with valid arguments."""

    def __init__(self, mounts: Sequence[Mount], max_result_bytes: int = 1_000_000,
                 auditor: Auditor = _no_audit, pipeline: Pipeline | None = None) -> None:
        self.mounts = list(mounts)
        self.pipeline = pipeline or Pipeline()  # the steps around every call (hermes_hub.core.pipeline)
        self.max_result_bytes = max_result_bytes
        self.auditor = auditor
        self.tools: dict[str, Entry] = {}
        self.prompts: dict[str, Entry] = {}
        self.resources: dict[str, Entry] = {}
        self.templates: dict[str, Entry] = {}
        self.collisions: list[Collision] = []
        self.name_warnings: list[str] = []
        self.withheld: Withheld = {}  # pinned tools whose definition changed: not listed, not callable
        self._fingerprints: dict[str, int] = {}
        self._tool_list: list[types.Tool] = []
        self._shared = listing.Index()
        self._personal: dict[str, tuple[Any, listing.Index]] = {}  # user -> (what it was built from, their index)
        self.generation = 0  # bumped by every rebuild: what was derived from the lists may be stale

    # -- building --------------------------------------------------------------------------

    def rebuild(self) -> set[str]:
        """Recompute the index from ready sources; return the kinds whose public lists changed."""
        built = listing.build(self.mounts, lambda m: m.source if m.source.ready else None, shaped)
        for c in set(built.collisions) - set(self.collisions):
            log.warning("%s name '%s' is offered by '%s' and '%s'; '%s' wins. Fix: %s",
                        c.kind, c.public, c.winner, c.loser, c.winner, c.fix)
        for w in set(built.warnings) - set(self.name_warnings):
            log.warning("%s", w)
        self._shared = built
        self.tools, self.prompts, self.resources, self.templates = (built.tools, built.prompts, built.resources,
                                                                    built.templates)
        self.collisions, self.name_warnings, self.withheld = built.collisions, built.warnings, built.withheld
        self._tool_list = built.tool_list
        self._personal.clear()
        self.generation += 1
        changed = set()
        for kind, index in (("tools", built.tools), ("prompts", built.prompts),
                            ("resources", built.resources | built.templates)):
            fp = hash(tuple((k, json.dumps(e.item.model_dump(mode="json"), sort_keys=True)) for k, e in index.items()))
            if self._fingerprints.get(kind) != fp:
                changed.add(kind)
                self._fingerprints[kind] = fp
        if self._fingerprints.get("own") != (own := personal.fingerprint(self.mounts)):  # a user's own listing
            changed |= {"tools", "prompts", "resources"}  # (their host lists again; others see the same)
            self._fingerprints["own"] = own
        return changed

    def listing_key(self, caller: Identity) -> str | None:
        """Who ``caller``'s lists are particular to: their user id while they have a listing of their own, else
        None (what they see is what everyone of their role sees)."""
        return caller.user_id if personal.own_lists(self.mounts, caller.user_id) else None

    def index_of(self, caller: Identity) -> listing.Index:
        """What ``caller`` is listed and routed by: the shared index, or, when they have their own connection of
        a ``per_user`` server, one where that server's part is their connection's lists (never another user's,
        never pinned: ``personal``)."""
        own = personal.own_lists(self.mounts, caller.user_id)
        if not own:
            return self._shared
        key = (self.generation, tuple((i, id(c)) for i, c in own.items()))
        if (cached := self._personal.get(caller.user_id)) is not None and cached[0] == key:
            return cached[1]
        built = personal.build(self.mounts, own, self.withheld)
        if len(self._personal) >= personal.MAX_CACHED:
            self._personal.clear()
        self._personal[caller.user_id] = (key, built)
        return built

    # -- listing ---------------------------------------------------------------------------

    def list_tools(self, caller: Identity) -> list[types.Tool]:
        """The tools ``caller`` may use (and so may see)."""
        index = self.index_of(require_identity(caller))
        if caller.is_admin:
            return self._tool_list if index is self._shared else index.tool_list
        return [e.item for e in index.tools.values() if e.mount.offers(e.original, caller)]

    def argument_problems(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """What ``arguments`` lack for tool ``name`` by its schema (empty: fine, or no such tool)."""
        entry = self.tools.get(name)
        return entry.check.problems(arguments) if entry else []

    def input_schema(self, name: str) -> dict[str, Any] | None:
        entry = self.tools.get(name)
        return entry.item.input_schema if entry else None

    # -- routing ---------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Route a call for ``ctx.caller``. Failures a model can act on come back as ``isError``
        results; progress, log messages and questions from the server go back through ``ctx``."""
        tools = self.index_of(require(ctx).caller).tools
        # an app calls its server's tools by their own names (aggregation/apps.py)
        entry = tools.get(name) or apps.own_name(tools.values(), name, ctx.in_scope) or self._unlisted(name, ctx)
        if entry is not None and not entry.mount.offers(entry.original, ctx.caller):
            entry = None  # a tool the caller may not use does not exist for them
        async with self.auditor(caller=ctx.caller, tool=name, server=entry.mount.source.name if entry else None,
                                arguments=arguments, session_id=ctx.session_id, run_id=ctx.run_id) as outcome:
            if entry is None and ctx.rounds and ctx.rounds.request_state:
                entry = self._continued(name, ctx.caller)
            if entry is None and (refused := refusal(self.withheld, name, ctx.caller)):
                outcome.refused(refused)
                return error_result(refused)
            if entry is None:
                waiting = self._not_ready_owner(name, ctx.caller)
                outcome.refused(str(waiting) if waiting else "unknown tool")
                if waiting:
                    return error_result(str(waiting))
                visible = [t.name for t in self.list_tools(ctx.caller) if ctx.in_scope is None or ctx.in_scope(t.name)]
                raise UnknownName("tool", name, f"{did_you_mean(name, visible)}call tools/list for the current names "
                                                f"(each is prefixed by its server)")
            result = await self._forward(entry, name, arguments or {}, ctx, outcome)
            if isinstance(result, types.CallToolResult):
                outcome.result_size = rough_size(result)
                if result.is_error:
                    outcome.tool_error(_first_text(result))
            return result

    async def _forward(self, entry: Entry, name: str, arguments: dict[str, Any], ctx: CallContext,
                       outcome: Outcome | None = None) -> types.CallToolResult | types.InputRequiredResult:
        if problems := entry.check.problems(arguments):
            listing = "\n".join(f"- {p}" for p in problems)
            return error_result(f"Invalid arguments for tool '{name}':\n{listing}\nFix these and call the tool again.")
        call = Call(name, entry.mount.source.name, entry.original, arguments, ctx, entry.item)
        if outcome is not None:
            outcome.call_id = call.call_id  # the audit row names the call (hermes-hub audit --unmask CALL_ID)
        # a step may change what is sent (the approval step drops its own round's state)
        return await self.pipeline.run(call, lambda: self._send(entry, name, call.arguments, call.ctx))

    async def _send(self, entry: Entry, name: str, arguments: dict[str, Any], ctx: CallContext,
                    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call to the source, with its retries: what the pipeline's steps wrap."""
        for attempt in itertools.count():
            try:
                result = await entry.mount.source.call_tool(entry.original, arguments, ctx)
                break
            except (ServerNotReady, DownstreamError) as failed:
                # A server's own error (its stderr, say) is for admins; a downstream's answer is the caller's.
                e = failed.for_caller(ctx.caller.is_admin) if isinstance(failed, ServerNotReady) else failed
                policy = entry.mount.retry
                if not policy.should_retry(e, entry.item, entry.original, attempt):
                    return error_result(policy.explain(e, entry.item, entry.original, attempt))
                log.info("retrying %s in %gs: %s", name, policy.delay(attempt, e), failed)
                await anyio.sleep(policy.delay(attempt, e))
        result = reserved.tool_result(result)  # the hub's and the protocol's _meta keys are not the server's to set
        if isinstance(result, types.InputRequiredResult):  # a round of questions for the host
            return result
        return fit_result(apps.tool_result(result, entry.mount.namespace), self.max_result_bytes)

    def visible(self, index: dict[str, Entry], caller: Identity) -> list[Any]:
        """The public items of ``index`` (resources, templates or prompts) ``caller`` may see."""
        require_identity(caller)
        return [e.item for e in index.values() if e.mount.serves(caller)]

    def listed(self, kind: str, caller: Identity) -> list[Any]:
        """``caller``'s ``kind`` ("resources", "templates", "prompts"), their own listings included (``index_of``)."""
        return self.visible(getattr(self.index_of(require_identity(caller)), kind), caller)

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        require(ctx)
        mount, original = self.route_uri(uri, ctx.caller)
        if not mount.serves(ctx.caller):
            raise UnknownName("resource", uri, "call resources/list and resources/templates/list for the current URIs")
        return apps.read_result(reserved.read_result(await mount.source.read_resource(original, ctx)), mount.namespace)

    async def subscribe(self, uri: str, watcher: Hashable, notify: Callable[[], Awaitable[None]],
                        ctx: CallContext) -> None:
        """Subscribe ``watcher`` to the resource ``uri``; ``notify`` runs when its server reports an update."""
        require(ctx)
        mount, original = self.route_uri(uri, ctx.caller)
        if not mount.serves(ctx.caller):
            raise UnknownName("resource", uri, "call resources/list and resources/templates/list for the current URIs")
        subscribe = getattr(mount.source, "subscribe_resource", None)
        if subscribe is None:
            raise DownstreamError(mount.source.name, "its resources cannot be subscribed to; read them again "
                                  "to see changes", types.INVALID_PARAMS)
        await subscribe(original, watcher, notify, **getattr(mount.source, "subscriber", lambda ctx: {})(ctx))

    async def unsubscribe(self, uri: str, watcher: Hashable) -> None:
        mount, original = self._route(uri, self._shared)  # per_user servers offer no subscriptions
        if unsubscribe := getattr(mount.source, "unsubscribe_resource", None):
            await unsubscribe(original, watcher)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None,
                         ctx: CallContext) -> types.GetPromptResult:
        entry = self.index_of(require(ctx).caller).prompts.get(name)
        if entry is not None and not entry.mount.serves(ctx.caller):
            entry = None
        if entry is None:
            if waiting := self._not_ready_owner(name, ctx.caller):
                raise waiting
            raise UnknownName("prompt", name, "call prompts/list for the current names")
        got = reserved.prompt_result(await entry.mount.source.get_prompt(entry.original, arguments, ctx))
        return apps.prompt_result(got, entry.mount.namespace)

    async def complete(self, ref: Any, argument: dict[str, str], context: dict[str, str] | None,
                       ctx: CallContext) -> types.CompleteResult:
        caller = require(ctx).caller
        index = self.index_of(caller)
        if isinstance(ref, types.PromptReference):
            entry = index.prompts.get(ref.name)
            if entry is None or not entry.mount.serves(caller):
                raise UnknownName("prompt", ref.name)
            new_ref: Any = ref.model_copy(update={"name": entry.original})
        else:
            entry = index.templates.get(ref.uri)
            if entry is None or not entry.mount.serves(caller):
                raise UnknownName("resource template", ref.uri)
            new_ref = ref.model_copy(update={"uri": entry.original})
        return await entry.mount.source.complete(new_ref, argument, context, ctx)

    def _unlisted(self, name: str, ctx: CallContext) -> Entry | None:
        """A name of a ``per_user`` server the caller sees nothing of yet (its shared listing is empty or lacks
        it, and they have no connection of theirs): their own connection answers, or says to connect."""
        index = self.index_of(ctx.caller)
        for i, m in enumerate(self.mounts):
            original = m.namespace.original(name) if m.namespace.prefix else None  # unprefixed: every name would be
            if (original is not None and personal.is_per_user(m) and m.source.ready and i not in index.own
                    and m.tool_filter(original) and m.offers(original, ctx.caller) and name not in self.withheld
                    and (ctx.in_scope is None or ctx.in_scope(name))
                    and not any(t.name == original for t in m.source.tools)):
                return Entry(m, original, types.Tool(name=name, input_schema={"type": "object"}))
        return None

    def _continued(self, name: str, caller: Identity) -> Entry | None:
        """The entry of a tool whose server is not ready, for a host's answer to a question its call
        asked: the server says what became of that call (e.g. that it restarted meanwhile)."""
        for m in self.mounts:
            original = m.namespace.original(name)
            if not m.source.ready and original is not None and m.tool_filter(original) and m.offers(original, caller):
                return Entry(m, original, types.Tool(name=name, input_schema={"type": "object"}))
        return None

    def _not_ready_owner(self, name: str, caller: Identity) -> HubError | None:
        """Why ``name`` cannot be reached now, if a server ``caller`` may use owns it but is not ready."""
        for m in self.mounts:
            if not m.source.ready and m.serves(caller) and m.namespace.original(name) is not None:
                found = ServerNotReady(m.source.name, m.source.describe_state(), getattr(m.source, "error", None))
                return found.for_caller(caller.is_admin)
        return None

    def route_uri(self, uri: str, caller: Identity) -> tuple[Mount, str]:
        """The mount and the server's own URI of ``uri``, by ``caller``'s index (``index_of``)."""
        return self._route(uri, self.index_of(require_identity(caller)))

    def _route(self, uri: str, index: listing.Index) -> tuple[Mount, str]:
        if entry := index.resources.get(uri):
            return entry.mount, entry.original
        candidates = [(i, m, o) for i, m in enumerate(self.mounts) if (o := m.namespace.original_uri(uri)) is not None]
        ready = [(m, o) for _, m, o in candidates if m.source.ready]
        for i, m, o in candidates:  # a template of the server (as the caller sees it) matches: that's the one
            if m.source.ready and any(_template_matches(t.uri_template, o) for t in index.lists_of(i, m).templates):
                return m, o
        prefixed = [(m, o) for m, o in ready if m.namespace.prefix]
        if len(prefixed) == 1 or len(ready) == 1:
            return (prefixed or ready)[0]
        if waiting := [m for _, m, _ in candidates if not m.source.ready and m.namespace.prefix]:
            raise ServerNotReady(waiting[0].source.name, waiting[0].source.describe_state(),
                                 getattr(waiting[0].source, "error", None))
        raise UnknownName("resource", uri, "call resources/list and resources/templates/list for the current URIs")


def _first_text(result: types.CallToolResult) -> str:
    return next((b.text for b in result.content if isinstance(b, types.TextContent)), "")


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _template_matches(template: str, uri: str) -> bool:
    parts = re.split(r"\{[^}]*\}", template)
    pattern = ".+?".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, uri) is not None
