"""The hub as an OAuth 2.1 authorization server and protected resource for its own endpoints.

    grants.py     what a person approved, and the secrets issued under it (hashes in the store)
    clients.py    registered clients (RFC 7591) and client ID metadata documents (an https client_id)
    fetch.py      fetching a metadata document: public addresses only, one deadline, a size cap, 4 at once
    bounds.py     what a client's metadata and an authorization request may hold; allowed redirect URIs
    budgets.py    requests a minute per address and hub-wide (/register, /authorize), body caps
    provider.py   the MCP SDK's provider protocol over both; ``resource`` binds tokens to one endpoint
    routes.py     the SDK's metadata, authorize, token, register and revoke handlers, at hub.public_url
    idp.py        an external identity provider's JWTs (auth.issuer, auth.audience), checked with PyJWT
    verifier.py   who a bearer token stands for on an endpoint: hub token, OAuth access token or JWT
    service.py    all of it, opened with the hub's store

The consent page is ``hermes_hub.app.web.consent``; the bearer check on /mcp is ``hermes_hub.protocol.upstream.auth``.
"""

from hermes_hub.protocol.authorization.service import Authorization, endpoint_paths
from hermes_hub.protocol.authorization.verifier import Verdict, Verifier

__all__ = ["Authorization", "Verdict", "Verifier", "endpoint_paths"]
