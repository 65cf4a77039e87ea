"""What a hub opens once when it starts and closes once when it stops (``hermes_hub.app.hub.services``): the
store, the vault, sessions, memory, the authenticator, the audit writer and the models. ``Parts`` is
the part of ``Hub`` that hands them out; before the hub has started each raises ``HubError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_hub.services import audit
from hermes_hub.core.agent.summaries import Summarizer
from hermes_hub.infra.errors import HubError
from hermes_hub.services.identity import Authenticator
from hermes_hub.services.memory import Memories
from hermes_hub.services.memory.documents import Documents
from hermes_hub.app.hub.services import Services
from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import Store
from hermes_hub.services.vault import Vault

if TYPE_CHECKING:
    from hermes_hub.infra.models import Provider


class Parts:
    """The services of a running hub; ``Hub`` sets ``_services`` when it starts."""

    _services: Services | None

    @property
    def services(self) -> Services:
        if self._services is None:
            raise HubError("the hub's store is not open; its sessions, memory, tokens and agent are available once "
                           "the hub has started")
        return self._services

    @property
    def started(self) -> bool:
        return self._services is not None

    @property
    def store(self) -> Store:
        return self.services.store

    @property
    def vault(self) -> Vault:
        return self.services.vault

    @property
    def sessions(self) -> Sessions:
        return self.services.sessions

    @property
    def memories(self) -> Memories:
        return self.services.memories

    @property
    def authenticator(self) -> Authenticator:
        return self.services.authenticator

    @property
    def audit_writer(self) -> audit.AuditWriter:
        return self.services.audit_writer

    @property
    def model(self) -> Provider | None:
        return self.services.model

    @property
    def summaries(self) -> Summarizer | None:
        return self.services.summaries

    def _sessions(self) -> Sessions:
        return self.sessions

    def _memories(self) -> Memories:
        return self.memories

    async def audited_store(self) -> Store:
        """The store, with every audit row submitted so far written (readers see their last call)."""
        await self.audit_writer.flush()
        return self.store

    def _documents(self) -> Documents:
        assert self.services.documents is not None
        return self.services.documents
