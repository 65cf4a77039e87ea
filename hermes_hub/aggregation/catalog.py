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

from hermes_hub.aggregation import apps, reserved
from hermes_hub.aggregation.namespace import name_problem
from hermes_hub.aggregation.shaping import Withheld, refusal, shaped
from hermes_hub.aggregation.mounts import Collision, Entry, Mount  # Mount, Entry: re-exported
from hermes_hub.aggregation.suggestions import did_you_mean
from hermes_hub.aggregation.truncation import fit_result, rough_size
from hermes_hub.call import CallContext, Identity, require, require_identity
from hermes_hub.pipeline import Call, Pipeline
from hermes_hub.errors import DownstreamError, HubError, ServerNotReady, UnknownName

log = logging.getLogger("hermes_hub.catalog")

ORIGIN_META = "hermes-hub/origin"
# A description past this is served cut, with a marker: no host reads megabytes of it, some cannot
# (the SDK's client refuses an SSE event over 1 MB), and everything the hub derives grows with it.
MAX_DESCRIPTION_CHARS = 16_000


class Outcome(Protocol):
    """What the audit learns about a call from inside it (see ``hermes_hub.audit.Recording``)."""

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
    """``auditor(caller=, tool=, server=, arguments=)`` wraps every call (see ``hermes_hub.audit.record``);
    inside it, ``pipeline`` runs its steps around each call of an existing tool with valid arguments."""

    def __init__(self, mounts: Sequence[Mount], max_result_bytes: int = 1_000_000,
                 auditor: Auditor = _no_audit, pipeline: Pipeline | None = None) -> None:
        self.mounts = list(mounts)
        self.pipeline = pipeline or Pipeline()  # the steps around every call (hermes_hub.pipeline)
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
        self.generation = 0  # bumped by every rebuild: what was derived from the lists may be stale

    # -- building --------------------------------------------------------------------------

    def rebuild(self) -> set[str]:
        """Recompute the index from ready sources; return the kinds whose public lists changed."""
        tools: dict[str, Entry] = {}
        prompts: dict[str, Entry] = {}
        resources: dict[str, Entry] = {}
        templates: dict[str, Entry] = {}
        collisions: list[Collision] = []
        warnings: list[str] = []
        withheld: Withheld = {}
        for m in self.mounts:
            if not m.source.ready:
                continue
            src, ns = m.source, m.namespace
            for tool in src.tools:
                if m.tool_filter(tool.name) and (served := shaped(m, tool, withheld)):
                    self._add(tools, "tool", m, tool.name, ns.name(tool.name), served, collisions, warnings)
            warnings += m.overrides.unknown(src.tools, m.config_path)
            for prompt in src.prompts:
                self._add(prompts, "prompt", m, prompt.name, ns.name(prompt.name), apps.with_meta(prompt, ns),
                          collisions, warnings)
            for res in src.resources:
                self._add(resources, "resource", m, res.uri, ns.uri(res.uri), res, collisions)
            for tpl in src.templates:
                self._add(templates, "template", m, tpl.uri_template, ns.uri(tpl.uri_template), tpl, collisions)
        for c in set(collisions) - set(self.collisions):
            log.warning("%s name '%s' is offered by '%s' and '%s'; '%s' wins. Fix: %s",
                        c.kind, c.public, c.winner, c.loser, c.winner, c.fix)
        for w in set(warnings) - set(self.name_warnings):
            log.warning("%s", w)
        self.tools, self.prompts, self.resources, self.templates = tools, prompts, resources, templates
        self.collisions, self.name_warnings, self.withheld = collisions, warnings, withheld
        self._tool_list = [e.item for e in tools.values()]
        self.generation += 1
        changed = set()
        for kind, index in (("tools", tools), ("prompts", prompts), ("resources", resources | templates)):
            fp = hash(tuple((k, json.dumps(e.item.model_dump(mode="json"), sort_keys=True)) for k, e in index.items()))
            if self._fingerprints.get(kind) != fp:
                changed.add(kind)
                self._fingerprints[kind] = fp
        return changed

    @staticmethod
    def _add(index: dict[str, Entry], kind: str, m: Mount, original: str, public: str, item: Any,
             collisions: list[Collision], warnings: list[str] | None = None) -> None:
        if public in index:
            collisions.append(Collision(kind, public, index[public].mount.source.name, m.source.name))
            return
        key = "uri_template" if kind == "template" else "uri" if kind == "resource" else "name"
        meta = {**(reserved.scrub(item.meta) or {}), ORIGIN_META: {"server": m.source.name, key: original}}
        update: dict[str, Any] = {key: public, "meta": meta}
        if len(description := getattr(item, "description", None) or "") > MAX_DESCRIPTION_CHARS:
            update["description"] = (f"{description[:MAX_DESCRIPTION_CHARS]} … [hermes-hub: cut from "
                                     f"{len(description):,} characters]")
            if warnings is not None:
                warnings.append(f"{kind} '{public}' has a description of {len(description):,} characters; the hub "
                                f"serves its first {MAX_DESCRIPTION_CHARS:,} (shorten it in server '{m.source.name}')")
        index[public] = Entry(m, original, item.model_copy(update=update))
        if warnings is not None and (why := name_problem(public)):
            fix = f"set {m.config_path}.prefix to something shorter" if m.config_path else "shorten hub.prefix"
            warnings.append(f"{kind} name '{public}' {why}; {fix}")

    # -- listing ---------------------------------------------------------------------------

    def list_tools(self, caller: Identity) -> list[types.Tool]:
        """The tools ``caller`` may use (and so may see)."""
        if require_identity(caller).is_admin:
            return self._tool_list
        return [e.item for e in self.tools.values() if e.mount.offers(e.original, caller)]

    def token_estimate(self, tools: Sequence[types.Tool] | None = None) -> int:
        """Roughly what ``tools`` (default: the whole list) cost a host's context (4 characters a token)."""
        dumped = [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                  for t in (self._tool_list if tools is None else tools)]
        return len(json.dumps(dumped)) // 4

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
        require(ctx)
        # an app calls its server's tools by their own names (aggregation/apps.py)
        entry = self.tools.get(name) or apps.own_name(self.tools.values(), name, ctx.in_scope)
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

    async def read_resource(self, uri: str, ctx: CallContext) -> types.ReadResourceResult:
        require(ctx)
        mount, original = self.route_uri(uri)
        if not mount.serves(ctx.caller):
            raise UnknownName("resource", uri, "call resources/list and resources/templates/list for the current URIs")
        return apps.read_result(reserved.read_result(await mount.source.read_resource(original, ctx)), mount.namespace)

    async def subscribe(self, uri: str, watcher: Hashable, notify: Callable[[], Awaitable[None]],
                        ctx: CallContext) -> None:
        """Subscribe ``watcher`` to the resource ``uri``; ``notify`` runs when its server reports an update."""
        require(ctx)
        mount, original = self.route_uri(uri)
        if not mount.serves(ctx.caller):
            raise UnknownName("resource", uri, "call resources/list and resources/templates/list for the current URIs")
        subscribe = getattr(mount.source, "subscribe_resource", None)
        if subscribe is None:
            raise DownstreamError(mount.source.name, "its resources cannot be subscribed to; read them again "
                                  "to see changes", types.INVALID_PARAMS)
        await subscribe(original, watcher, notify, **getattr(mount.source, "subscriber", lambda ctx: {})(ctx))

    async def unsubscribe(self, uri: str, watcher: Hashable) -> None:
        mount, original = self.route_uri(uri)
        if unsubscribe := getattr(mount.source, "unsubscribe_resource", None):
            await unsubscribe(original, watcher)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None,
                         ctx: CallContext) -> types.GetPromptResult:
        require(ctx)
        entry = self.prompts.get(name)
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
        if isinstance(ref, types.PromptReference):
            entry = self.prompts.get(ref.name)
            if entry is None or not entry.mount.serves(caller):
                raise UnknownName("prompt", ref.name)
            new_ref: Any = ref.model_copy(update={"name": entry.original})
        else:
            entry = self.templates.get(ref.uri)
            if entry is None or not entry.mount.serves(caller):
                raise UnknownName("resource template", ref.uri)
            new_ref = ref.model_copy(update={"uri": entry.original})
        return await entry.mount.source.complete(new_ref, argument, context, ctx)

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

    def route_uri(self, uri: str) -> tuple[Mount, str]:
        if entry := self.resources.get(uri):
            return entry.mount, entry.original
        candidates = [(m, o) for m in self.mounts if (o := m.namespace.original_uri(uri)) is not None]
        ready = [(m, o) for m, o in candidates if m.source.ready]
        for m, o in ready:  # a template of the server matches: that's the one
            if any(_template_matches(t.uri_template, o) for t in m.source.templates):
                return m, o
        prefixed = [(m, o) for m, o in ready if m.namespace.prefix]
        if len(prefixed) == 1 or len(ready) == 1:
            return (prefixed or ready)[0]
        if waiting := [m for m, _ in candidates if not m.source.ready and m.namespace.prefix]:
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
