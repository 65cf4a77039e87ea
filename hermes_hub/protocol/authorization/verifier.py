"""Who a bearer token on an endpoint stands for: a static hub token, an access token this hub issued
(for that endpoint only) or, with ``auth.issuer``, an external identity provider's JWT.

    verdict = await verifier.verify(token, "/mcp/work")
    verdict.identity     # None: refused; verdict.why says why, for the 401

A hub token (``hermes-hub token create``, ``auth.tokens``) opens every endpoint, as before OAuth. An
access token opens the endpoint its grant was approved for: one for ``/mcp/work`` gets 401 on
``/mcp``, with a description that says to sign in for that endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_hub.protocol.authorization.grants import ACCESS_PREFIX, Grants
from hermes_hub.protocol.authorization.idp import MAX_JWT_CHARS, ExternalIssuer, looks_like_jwt
from hermes_hub.infra.call import Identity
from hermes_hub.services.identity import MAX_TOKEN_CHARS, Authenticator


@dataclass(frozen=True)
class Verdict:
    identity: Identity | None
    why: str = ""
    credential: str | None = None  # what a session is bound to when not the token itself (a grant survives refresh)


class Verifier:
    def __init__(self, authenticator: Authenticator, grants: Grants, external: ExternalIssuer | None = None) -> None:
        self.authenticator, self.grants, self.external = authenticator, grants, external
        self.max_chars = MAX_JWT_CHARS if external is not None else MAX_TOKEN_CHARS

    async def enabled(self) -> bool:
        """True when anyone could present a credential: a hub token exists, or an identity provider is set."""
        return self.external is not None or await self.authenticator.enabled()

    async def verify(self, token: str, path: str) -> Verdict:
        if len(token) > self.max_chars:
            return Verdict(None, "token too long")
        if token.startswith(ACCESS_PREFIX):
            found = await self.grants.check(token)
            if isinstance(found, str):
                return Verdict(None, found)
            if found.resource != path:
                return Verdict(None, f"this token was issued for {found.resource}, not {path}; sign in for {path}")
            return Verdict(found.identity, credential="grant " + found.grant_id)
        if self.external is not None and looks_like_jwt(token):
            identity = await self.external.identify(token)
            return Verdict(None, identity) if isinstance(identity, str) else Verdict(identity)
        identity = await self.authenticator.identify(token)
        return Verdict(identity, "" if identity else "invalid or revoked token")
