"""The hub's OAuth, opened with its store: grants, clients, the SDK provider and the token verifier.

    authorization = Authorization(store, authenticator, config)
    await authorization.verifier.verify(token, "/mcp")
"""

from __future__ import annotations

from datetime import timedelta

from hermes_hub.protocol.authorization.clients import Clients
from hermes_hub.protocol.authorization.grants import Grants
from hermes_hub.protocol.authorization.idp import ExternalIssuer
from hermes_hub.protocol.authorization.provider import HubProvider
from hermes_hub.protocol.authorization.verifier import Verifier
from hermes_hub.infra.config import HubConfig
from hermes_hub.services.identity import Authenticator
from hermes_hub.infra.storage import Store


def endpoint_paths(config: HubConfig) -> list[str]:
    """Every endpoint a token may be bound to: ``/mcp`` and ``/mcp/<toolset>`` (as ``upstream.endpoint``)."""
    return ["/mcp", *(f"/mcp/{name}" for name in config.toolsets)]


class Authorization:
    def __init__(self, store: Store, authenticator: Authenticator, config: HubConfig) -> None:
        auth = config.auth
        self.grants = Grants(store, authenticator.role_now)  # a sign-in stands while its person's hub token does
        self.use(config)
        self.clients = Clients(store, private=auth.client_metadata_private)
        self.paths = endpoint_paths(config)
        self.provider = HubProvider(self.grants, self.clients, self.paths)
        external = ExternalIssuer(auth.issuer, auth.audience, auth.user_claim) if auth.issuer and auth.audience else None
        self.verifier = Verifier(authenticator, self.grants, external)

    def use(self, config: HubConfig) -> None:
        """The settings a reload may change: how long a sign-in lasts (``auth.grant_lifetime_days``)."""
        self.grants.lifetime = timedelta(days=config.auth.grant_lifetime_days)
