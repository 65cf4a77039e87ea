"""The composition root: config -> pool of downstream connections -> catalog -> upstream server.

    async with Hub.from_file("hub.json") as hub:   # what `hermes-hub serve` runs: reloads on change
        await hub.wait_settled(30)
        async with hub.client() as host: ...  # an in-process MCP host, acting as the local user
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from hermes_hub.services import audit
from hermes_hub.core.agent.artifacts import Artifacts
from hermes_hub.core.agent.gate import RunGate
from hermes_hub.core.agent.loop import Agent
from hermes_hub.core.agent.profiles import Profile, resolve
from hermes_hub.core.aggregation.catalog import Catalog, Mount
from hermes_hub.core.aggregation.filters import NameFilter, RoleFilter
from hermes_hub.core.aggregation.guard import PinGuard
from hermes_hub.core.aggregation.namespace import Namespace
from hermes_hub.core.aggregation.overrides import Overrides
from hermes_hub.core.aggregation.retry import RetryPolicy
from hermes_hub.infra.bridge import Bridge
from hermes_hub.core.builtins import Builtins, own_listed
from hermes_hub.core.builtins.agent_tools import agent_items
from hermes_hub.core.builtins.artifact_tools import artifact_items
from hermes_hub.core.builtins.audit_tools import audit_items
from hermes_hub.core.builtins.hub_tools import status_items
from hermes_hub.core.builtins.docs_tools import docs_items
from hermes_hub.core.builtins.memory_tools import memory_items
from hermes_hub.core.builtins.time_tools import time_items
from hermes_hub.core.builtins.session_tools import session_items
from hermes_hub.core.builtins.token_tools import token_items
from hermes_hub.infra.call import Identity, acting_as, named_caller
from hermes_hub.infra.config import HubConfig, load_config
from hermes_hub.downstream import Pool
from hermes_hub.downstream.grants import Grants
from hermes_hub.downstream.pool import Changes
from hermes_hub.infra.errors import HubError, NotFound
from hermes_hub.app.hub.parts import Parts
from hermes_hub.infra.events import Bus, ServerStateChanged
from hermes_hub.app.hub.reports import Reports
from hermes_hub.app.hub.scheduling import Scheduling
from hermes_hub.services.identity import ADMIN, IDENTITY_KEY, StaticToken, local_user_name
from hermes_hub.infra.masking import Masker
from hermes_hub.core.pipeline import Pipeline, Step
from hermes_hub.core.pipeline.approval import ApprovalStep, Rules
from hermes_hub.core.pipeline.approvals import Approvals
from hermes_hub.core.pipeline.blocks import Blocks
from hermes_hub.core.pipeline.detectors import Found, Redactor
from hermes_hub.core.pipeline.limits import Limits
from hermes_hub.core.pipeline.mask import argument_detectors, masking_steps
from hermes_hub.core.pipeline.telemetry import Telemetry
from hermes_hub.app.hub.reloader import reload_from, watch_config
from hermes_hub.app.hub.services import Services, open_services
from hermes_hub.infra.telemetry.metrics import Metrics
from hermes_hub.core.toolsets.deferral import Habits, HostHints
from hermes_hub.core.toolsets.search import ToolIndex
from hermes_hub.core.toolsets.tokens import estimated_tokens
from hermes_hub.core.toolsets.view import Scope, View
from hermes_hub.protocol.upstream.endpoint import Endpoint
from hermes_hub.protocol.upstream.first_list import FirstList
from hermes_hub.protocol.upstream.server import Announcer, HubServer, build_server
from hermes_hub.protocol.upstream.tasks import TaskBoard


if TYPE_CHECKING:
    from hermes_hub.infra.models import Provider

log = logging.getLogger("hermes_hub")
ANNOUNCE_DEBOUNCE, HABITS_EVERY = 0.1, 600.0  # seconds; how often the tools each person calls daily are read

try:
    VERSION = version("hermes-hub")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0"


class Hub(Parts, Reports):
    """The hub. ``Hub.from_file(path)`` is how every command builds it (it reloads the file on
    SIGHUP and whenever it changes); ``Hub(config)`` serves a config built in memory."""

    @classmethod
    def from_file(cls, path: str | Path) -> Hub:
        """The hub of the config file at ``path`` (``ConfigError`` names what is wrong in it)."""
        config = load_config(path)
        for warning in config.warnings:
            log.warning("%s", warning)
        return cls(config, config_path=path)

    def __init__(self, config: HubConfig, *, config_path: str | Path | None = None) -> None:
        self.config = config
        self.config_path = Path(config_path) if config_path else None
        self._services: Services | None = None  # store, sessions, memory, models: open while the hub runs
        self.local = Identity(config.auth.local_user or local_user_name(), ADMIN)
        self.builtins = Builtins()
        self._artifacts = lambda: Artifacts(self.store, self.config.artifacts)  # once the store is open
        self.agent_bridge = Bridge("hermes", lambda: "the hub stopped")  # agent runs asking 2026-07-28 hosts
        self.tasks = TaskBoard(lambda: self.config.hub.task_ttl)  # calls hosts run as tasks (upstream/tasks.py)
        self.builtins.add(*status_items(self.report), *session_items(self._sessions),
                          *memory_items(self._memories, self._documents),
                          *agent_items(self._agent, lambda: self.config, self.audited_store, self.agent_bridge),
                          *audit_items(self.audited_store, self.reload_file), *artifact_items(self._artifacts),
                          *token_items(self.audited_store, lambda: bool(self.config.auth.tokens)),
                          *time_items(lambda: self.config.agent.timezone))  # issue 20: times for tools
        self.scheduling, self.fires = Scheduling(self), True  # issue 24: schedules (fires: run the loop)
        self.builtins.add(*docs_items(self._documents, lambda: self.config))  # issue 23: documents
        self.run_gate = RunGate(lambda: self.config.agent.max_concurrent)  # agent runs at once in this hub
        self._detectors: Redactor | None = None  # guards.mask's, over the stored arguments too (_pipeline sets them)
        self.masker = Masker(tuple(config.storage.audit_mask_patterns), detect=self._detect)  # audit, sessions, traces
        self.grants = Grants(lambda: self.vault)  # OAuth grants of remote servers, in the vault once it is open
        self.pool = Pool(config, on_change=self._on_change, grants=self.grants, vault=lambda: self.vault)
        self._states: dict[str, Any] = {}  # each server's state last published on the bus
        self.events, self.metrics = Bus(masker=self.masker), Metrics()  # issue 22: the event bus; /metrics (telemetry)
        self.pins = PinGuard(config.hub.pin)  # pinned tool definitions, kept in step with the store once started
        self.approvals = Approvals(lambda: self.store, self.audit_action, self.masker)  # guards.approve's book
        self.units = Blocks(lambda: self.store if self._services else None)  # large limits' units, in blocks
        self.catalog = Catalog(self._mounts(), config.hub.max_result_bytes, auditor=self._audit,
                               pipeline=Pipeline(self._pipeline(config)))
        self.catalog.rebuild()
        self.tool_index, self.habits = ToolIndex(), Habits()  # index: memory's embedder once the store is open
        self.first_list = FirstList(config.hub.first_list_wait, self.pool)  # shared by every endpoint
        self.endpoints: dict[str | None, Endpoint] = {None: self._endpoint(None)}
        self.endpoints.update({name: self._endpoint(name) for name in config.toolsets})
        self.announcer: Announcer = self.endpoints[None].announcer
        self.server: HubServer = self.endpoints[None].server
        self._reload_lock = anyio.Lock()
        self._wake = anyio.Event()
        self._warm = anyio.Event()
        self._announcing = False
        self._announced = anyio.Event()  # set (and replaced) after each announcing pass
        self._stack = AsyncExitStack()

    def _endpoint(self, toolset: str | None) -> Endpoint:
        """``/mcp`` (``toolset`` None) or ``/mcp/<toolset>``: a view of the catalog and its own server."""
        ns = Namespace(self.config.hub.prefix, self.config.hub.separator)

        def scope() -> Scope:
            hub = self.config.hub
            own = own_listed(hub.own_tools, ns)
            if toolset is None:
                return Scope(lazy=hub.expose == "lazy", always=NameFilter.of(hub.always), cache_ttl_ms=hub.cache_ttl_ms,
                             own=own, own_source=self.builtins.name)
            ts = self.config.toolsets.get(toolset)
            if ts is None:  # removed by a reload
                return Scope(servers=frozenset(), cache_ttl_ms=hub.cache_ttl_ms)
            return Scope.of(ts, hub.always, hub.cache_ttl_ms, own, self.builtins.name)

        hints = HostHints(lambda: self.config.hub.hints, self.habits, estimated_tokens, ns.name)
        view = View(self.catalog, scope, self.tool_index, ns.name, toolset, hints)
        view.tools_changed()
        announcer = Announcer()
        label = "" if toolset is None else f" (toolset '{toolset}')"
        server = build_server(
            view, announcer, name=self.config.hub.name, version=VERSION, identify=self.identify, tasks=self.tasks,
            first_list=self.first_list,
            instructions=f"hermes-hub{label}: tools of several MCP servers, each prefixed with its server's name.",
        )
        return Endpoint(toolset, view, server, announcer)

    @asynccontextmanager
    async def client(self, toolset: str | None = None, *, caller: Identity | None = None,
                     **options: Any) -> AsyncIterator[Any]:
        """An in-process MCP ``Client`` of ``toolset``'s endpoint, acting as ``caller`` (default: the local user;
        the CLI's in-process commands). ``options`` go to ``mcp.Client`` (``mode``, callbacks)."""
        from mcp import Client

        with acting_as(caller or self.local):
            async with Client(self.endpoint(toolset).server, **options) as client:
                yield client

    def endpoint(self, toolset: str | None) -> Endpoint:
        """The endpoint of ``toolset`` (None: the whole catalog); ``HubError`` names the toolsets there are."""
        if toolset not in self.endpoints:
            known = ", ".join(sorted(n for n in self.endpoints if n)) or "none (add one under 'toolsets')"
            raise HubError(f"no toolset '{toolset}' in the hub's config (toolsets: {known}); toolsets added by a "
                           f"reload are served after a restart")
        return self.endpoints[toolset]

    def _agent(self) -> Agent:
        prefix, sep = self.config.hub.prefix, self.config.hub.separator
        own = f"{prefix}{sep}agent" if prefix else "agent_run"
        return Agent(self.catalog, self.sessions, self.memories, self.model, own_tools=own, summaries=self.summaries,
                     model_for=self._model_for, masker=self.masker, artifacts=self._artifacts(), events=self.events,
                     artifact_reader=f"{prefix}{sep}artifact_read" if prefix else "artifact_read", gate=self.run_gate,
                     budget=self.limits.spend, profiles=lambda name: resolve(self.config, name),  # delegates (issue 21)
                     servers_up=self.first_list.hold)

    def _model_for(self, profile: Profile) -> Provider | None:
        """The model of ``profile``: the hub's own unless the profile overrides a model key (made once, closed
        with the hub)."""
        settings = profile.settings
        if settings is self.config.agent or settings == self.config.agent:
            return self.model
        return None if settings.provider is None else self.services.model_for(settings)

    def identify(self, ctx: Any) -> Identity:
        """The caller of a request: over HTTP who the auth middleware found; on a transport without callers
        (stdio, in-process) the one its entry named with ``acting_as`` (``serve --stdio``, the CLI: the
        local user).

        Either way a request without a caller is refused, never served as the local admin: an HTTP request
        that reached a handler outside the middleware, or an in-process client nobody named.
        """
        if (request := getattr(ctx, "request", None)) is None:
            if (named := named_caller()) is None:
                raise HubError("this request names no caller: a transport without callers of its own (stdio, "
                               "in-process) must name one with acting_as(identity)")
            return named
        found = request.scope.get("state", {}).get(IDENTITY_KEY)
        if found is None:
            raise HubError("this HTTP request carries no caller identity; it must pass the hub's authentication")
        return found

    def _audit(self, *, caller: Identity, tool: str, server: str | None, arguments: dict[str, Any] | None,
               session_id: str | None = None, run_id: str | None = None) -> Any:
        if self._services is None:  # a call before the hub started (tests of the catalog alone)
            return audit.unrecorded()
        if server == self.builtins.name and arguments:  # e.g. a memory's text: forgetting must reach it
            own = Namespace(self.config.hub.prefix, self.config.hub.separator).original(tool)
            arguments = self.builtins.redact(own or tool, arguments)
        return audit.record(self.store, user_id=caller.user_id, tool=tool, server=server, session_id=session_id,
                            run_id=run_id, arguments=arguments, masker=self.masker, writer=self.audit_writer)

    def audit_action(self, caller: Identity, action: str, arguments: dict[str, Any]) -> Any:
        """An audit row for an act outside MCP (the status page's restart and reload), under ``action``."""
        return self._audit(caller=caller, tool=action, server=None, arguments=arguments)

    async def reload_file(self) -> dict[str, Any]:
        """Read the config file again and apply it (``hermes_hub_reload``, the status page's reload)."""
        if self.config_path is None:
            raise HubError("this hub was started without a config file, so there is nothing to reload")
        if not await reload_from(self, self.config_path, "hermes_hub_reload"):
            raise HubError("the config file is invalid; the running configuration stays (see the hub's log)")
        return {"reloaded": str(self.config_path), "servers": sorted(self.pool.connections)}

    async def _prune_loop(self) -> None:
        while True:
            days = self.config.storage.audit_retention_days
            if days > 0:
                await audit.prune(self.store, days=days)
            await self._artifacts().prune()  # expired artifacts (artifacts.keep_days); reads refuse them already
            await anyio.sleep(3600)

    def _pipeline(self, config: HubConfig) -> list[Step]:
        """The call pipeline's steps, outermost first (``hermes_hub.core.pipeline``), from ``config.guards``."""
        steps: list[Step] = [Telemetry(self.events, self.metrics)]  # 1. the call's span, metrics, events
        self.limits = Limits(config.guards.limits, lambda: self.store if self._services else None, units=self.units)
        steps += [self.limits] if config.guards.limits else []  # 2. calls a minute, at once, agent tokens a day
        if config.guards.approve is not None:  # 3. approval: a person's yes before the call
            steps.append(ApprovalStep(Rules.of(config.guards.approve), self.approvals))
        steps += masking_steps(config, lambda: self.vault if self._services else None)  # innermost
        self._detectors = argument_detectors(config)
        return steps

    def _detect(self) -> Found | None:
        """A scan of one kept value by ``guards.mask``'s detectors, as of the running configuration."""
        return None if self._detectors is None else self._detectors.session()

    def _mounts(self) -> list[Mount]:
        sep = self.config.hub.separator
        mounts = [Mount(self.builtins, Namespace(self.config.hub.prefix, sep), config_path="hub",
                        access=self.builtins.access)]
        for name, conn in self.pool.connections.items():
            cfg = conn.cfg
            mounts.append(Mount(conn, Namespace(self.config.prefix_of(name), sep),
                                NameFilter.of(cfg.tools.allow, cfg.tools.deny), f"mcpServers.{name}",
                                RoleFilter.of(cfg.roles, cfg.tool_roles),
                                RetryPolicy(cfg.retries, retryable=tuple(cfg.retryable)),
                                None if cfg.roles is None else tuple(cfg.roles), Overrides.of(cfg.overrides), self.pins))
        return mounts

    async def reload(self, config: HubConfig) -> Changes:
        """Apply a new config: only servers whose entry changed restart; hosts hear list_changed."""
        async with self._reload_lock:
            changes = await self.pool.apply(config)
            self.config, self.pins.mode = config, config.hub.pin
            if self._services is not None:  # hub.json's tokens: one taken out opens nothing, nor its user's sign-ins
                self.authenticator.use_static(StaticToken(t.token, t.user, t.role) for t in config.auth.tokens)
                if self.services.authorization is not None:
                    self.services.authorization.use(config)
            self.catalog.mounts = self._mounts()
            self.catalog.max_result_bytes = config.hub.max_result_bytes
            self.catalog.pipeline.steps = tuple(self._pipeline(config))
            self._on_change(None)
            return changes

    async def restart(self, name: str) -> None:
        """Stop server ``name`` and start it afresh: a new process (or HTTP session), handshake and listing."""
        async with self._reload_lock:
            if name not in self.pool.connections:
                raise NotFound("server", name, f"running servers: {', '.join(sorted(self.pool.connections)) or 'none'}")
            await self.pool.restart(name)
            self.catalog.mounts = self._mounts()
            self._on_change(None)

    def _on_change(self, conn: Any) -> None:  # a Connection, or a per_user server's Accounts; None: a reload
        # Rebuild at once, so a server that just became READY is callable in the same tick;
        # only the announcement to hosts is deferred (and thereby coalesced).
        if conn is not None and self._states.get(conn.name) != conn.state:  # the status page's live view follows it
            self._states[conn.name] = conn.state
            self.events.publish(ServerStateChanged(run_id=None, user_id="", server=conn.name, state=conn.state.value))
        changed = self.catalog.rebuild()
        for ep in self.endpoints.values():  # each endpoint hears of the changes to its own tools only
            kinds = changed - {"tools"}
            if ep.view.tools_changed():
                kinds.add("tools")
            ep.pending |= kinds
        if any(ep.pending for ep in self.endpoints.values()):
            self._wake.set()
            self._warm.set()

    async def _announce_loop(self) -> None:
        while True:
            await self._wake.wait()
            await anyio.sleep(ANNOUNCE_DEBOUNCE)  # a burst of changes (servers starting, a reload) is one notice
            self._wake = anyio.Event()
            self._announcing = True
            for ep in self.endpoints.values():
                kinds, ep.pending = ep.pending, set()
                if kinds:
                    await ep.announcer.changed(kinds)
            self._announcing = False
            self._announced.set()
            self._announced = anyio.Event()

    @property
    def announced(self) -> bool:
        """Every list change so far has been announced to the hosts (none waiting or being sent)."""
        return not self._wake.is_set() and not self._announcing

    async def wait_announced(self) -> None:
        """Return once every list change so far has been announced to the hosts. Callers bound it."""
        while not self.announced:
            await self._announced.wait()

    async def _warm_loop(self) -> None:
        """Embed new tools' descriptions for semantic tool search, off the request path (lazy endpoints only)."""
        while True:
            await self._warm.wait()
            await anyio.sleep(ANNOUNCE_DEBOUNCE)
            self._warm = anyio.Event()
            if any(ep.view.scope().lazy for ep in self.endpoints.values()):
                await self.tool_index.warm(self.catalog.list_tools(self.local))

    async def __aenter__(self) -> Hub:
        """Open the services, start the pool, then the loops that use them; ``__aexit__`` stops them in
        reverse: the loops (and agent runs of 2026 hosts) first, then the pool, then the services."""
        async with AsyncExitStack() as stack:
            self._services = await stack.enter_async_context(open_services(self.config, self.masker))
            self.tool_index.embedder = self.memories.embedder  # tool search uses memory's embedder
            await stack.enter_async_context(self.pins.watching(self.store, lambda: self._on_change(None)))
            await stack.enter_async_context(self.pool)
            loops = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(loops.cancel_scope.cancel)  # first on exit: no loop outlives what it uses
            self.agent_bridge.attach(loops)
            self.tasks.attach(loops)
            loops.start_soon(self._announce_loop)
            loops.start_soon(self._prune_loop)
            loops.start_soon(self.units.run)
            if self.fires:
                self.scheduling.start(loops)
            loops.start_soon(self.metrics.follow, self.events)
            self._warm.set()
            loops.start_soon(self._warm_loop)
            loops.start_soon(self.habits.follow, lambda: self.store, HABITS_EVERY)
            if self.config_path is not None:
                loops.start_soon(watch_config, self, self.config_path)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    async def shutdown(self, timeout: float) -> None:
        """Write the audit rows submitted so far and stop every child, within ``timeout`` seconds:
        for a stop that cannot wait for the orderly exit of ``async with hub``."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout):
            if self._services is not None:
                await self.audit_writer.close(timeout / 2)
            await self.pool.stop_all()

    async def wait_settled(self, timeout: float) -> bool:
        """Wait until every server is READY or its first attempt has ended; False if ``timeout`` passed first."""
        with anyio.move_on_after(timeout):
            await self.pool.wait_settled()
            return True
        return False
