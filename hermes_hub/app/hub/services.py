"""The hub's services over its store: opened once when the hub starts, closed once when it stops.

    async with open_services(config, masker) as services:
        await services.sessions.create(user_id, "title")

Each resource is opened after what it uses and closed before it: the store, then the model, then
memory (whose indexer and extraction loops use both). The services' own loops (the audit writer,
session summaries) run in a task group entered after all of them and cancelled before any closes;
the audit rows still pending are written after the writer stops and before the store closes. The
hub starts its loops (``Hub.__aenter__``) inside these and stops them first.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import SecretStr

from hermes_hub.services import audit
from hermes_hub.core.agent.summaries import Summarizer
from hermes_hub.protocol.authorization import Authorization
from hermes_hub.infra.config import MODEL_KEYS, HubConfig
from hermes_hub.services.identity import Authenticator, StaticToken
from hermes_hub.infra.masking import Masker
from hermes_hub.services.memory import Memories
from hermes_hub.services.memory.documents import Documents
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store, open_store
from hermes_hub.services.vault import Vault, load_hub_key

if TYPE_CHECKING:
    from hermes_hub.infra.config.sections import AgentSection
    from hermes_hub.infra.models import Provider

log = logging.getLogger("hermes_hub")
CLOSE_TIMEOUT = 5.0  # seconds a model's client may take to close


@dataclass
class Services:
    store: Store
    sessions: Sessions
    memories: Memories
    authenticator: Authenticator
    audit_writer: audit.AuditWriter
    model: Provider | None  # the hub's agent model (``agent``); None when there is none
    summaries: Summarizer | None  # None without a model that may run in the background
    vault: Vault  # secrets sealed under the hub's key: OAuth grants (kind "oauth"), people's secrets ("secret")
    _stack: AsyncExitStack = field(repr=False)
    authorization: Authorization | None = field(default=None, repr=False)  # the hub's OAuth (hermes_hub.protocol.authorization)
    _models: dict[tuple[Any, ...], Provider] = field(default_factory=dict, repr=False)
    documents: Documents | None = field(default=None, repr=False)  # the knowledge layer (hermes_docs_*)

    def model_for(self, settings: AgentSection) -> Provider:
        """A profile's own model (one per distinct model settings), made on first use and closed with the
        services; the hub's loops have stopped by then, so no run still uses it."""
        key = tuple(v.get_secret_value() if isinstance(v := getattr(settings, k), SecretStr) else v
                    for k in MODEL_KEYS) + (str(settings.script_path),)
        if key not in self._models:
            self._models[key] = provider = _make(settings)
            self._stack.push_async_callback(_close, provider)
        return self._models[key]


def _make(settings: AgentSection) -> Provider:
    from hermes_hub.infra.models import make_provider  # the vendors' SDKs load only when a model is used

    return make_provider(settings)


async def _close(provider: Provider) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT) as scope:
        await provider.aclose()
    if scope.cancelled_caught:
        log.warning("the model %s took over %ss to close; left behind", provider.name, CLOSE_TIMEOUT)


async def _last_rows(writer: audit.AuditWriter) -> None:
    with anyio.CancelScope(shield=True):  # close() bounds its own write
        await writer.close()


@asynccontextmanager
async def open_services(config: HubConfig, masker: Masker) -> AsyncIterator[Services]:
    async with AsyncExitStack() as stack:
        storage = config.storage
        store = await stack.enter_async_context(open_store(storage.url, base_dir=config.base_dir))
        writer = audit.AuditWriter(store)
        stack.push_async_callback(_last_rows, writer)  # after its loop stops, before the store closes
        model = None
        if config.agent.provider is not None:
            model = _make(config.agent)
            stack.push_async_callback(_close, model)
        background = model if getattr(model, "background", True) else None  # sampling: a host per call
        memories = await stack.enter_async_context(Memories(store, config.memory, judge=background))
        summaries = Summarizer(store, background) if background is not None else None
        static = [StaticToken(t.token, t.user, t.role) for t in config.auth.tokens]
        services = Services(store, Sessions(store, max_message_bytes=storage.max_message_bytes, masker=masker,
                                               lock_ttl=storage.session_lock_ttl),
                            memories, Authenticator(store, static), writer, model, summaries,
                            Vault(store, load_hub_key(storage.url, config.base_dir)), stack)
        services.authorization = Authorization(store, services.authenticator, config)
        services.documents = await stack.enter_async_context(Documents(store, memories.embedder))
        loops = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(loops.cancel_scope.cancel)  # first on exit: the loops stop before what they use
        loops.start_soon(writer.run)
        if summaries is not None:
            loops.start_soon(summaries.run)
        yield services
