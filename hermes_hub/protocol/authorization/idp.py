"""An external identity provider's JWT access tokens (``auth.issuer`` + ``auth.audience``).

    idp = ExternalIssuer("https://idp.example/realms/team", audience="hermes-hub", claim="email")
    found = await idp.identify(jwt)     # Identity, or why not (a sentence for the 401)

The issuer's signing keys come from its JWKS (``jwks_uri`` of its OpenID or RFC 8414 metadata), fetched
when first needed and kept ``KEYS_FRESH`` seconds. A token signed with a key id the hub does not know
fetches them again, at most once every ``REFETCH_AFTER`` seconds, so a key rotation is picked up at
once and a flood of made-up key ids costs one fetch. Signatures, ``exp``, ``iss`` and ``aud`` are
checked by PyJWT; nothing here is crypto of our own. The configured claim (``sub`` or ``email``)
names the hub user.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import httpx2
import jwt

from hermes_hub.infra.call import Identity

log = logging.getLogger("hermes_hub.protocol.authorization")
KEYS_FRESH = 3600.0
REFETCH_AFTER = 30.0
FETCH_TIMEOUT = 5.0
MAX_JWT_CHARS = 8192
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("ey")


class ExternalIssuer:
    def __init__(self, issuer: str, audience: str, claim: str = "sub") -> None:
        self.issuer, self.audience, self.claim = issuer.rstrip("/"), audience, claim
        self._keys: dict[str, Any] = {}
        self._fetched = -KEYS_FRESH
        self._forced = -REFETCH_AFTER  # the last fetch an unknown key id asked for
        self._lock = anyio.Lock()

    async def _jwks_uri(self, http: httpx2.AsyncClient) -> str:
        for suffix in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
            answer = await http.get(self.issuer + suffix)
            if answer.status_code == 200 and isinstance(uri := answer.json().get("jwks_uri"), str):
                return uri
        raise ValueError(f"{self.issuer} publishes no jwks_uri in its OpenID or OAuth metadata")

    async def _refresh(self, force: bool) -> None:
        async with self._lock:
            now = time.monotonic()
            if (not force and now - self._fetched < KEYS_FRESH) or (force and now - self._forced < REFETCH_AFTER):
                return
            self._fetched = now  # a failed fetch counts too: the next waits, rather than one per request
            if force:
                self._forced = now
            try:
                async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=False) as http:
                    answer = await http.get(await self._jwks_uri(http))
                    answer.raise_for_status()
                    keys = jwt.PyJWKSet.from_dict(answer.json())
                self._keys = {k.key_id or "": k for k in keys.keys}
            except (httpx2.HTTPError, ValueError, jwt.PyJWTError) as e:
                log.warning("cannot read the signing keys of auth.issuer %s: %s", self.issuer, str(e)[:300])

    async def identify(self, token: str) -> Identity | str:
        if len(token) > MAX_JWT_CHARS:
            return "token too long"
        try:
            kid = jwt.get_unverified_header(token).get("kid") or ""
        except jwt.PyJWTError:
            return "malformed JWT"
        await self._refresh(force=False)
        if kid not in self._keys:
            await self._refresh(force=True)
        key = self._keys.get(kid)
        if key is None:
            return f"the JWT's signing key is not one of {self.issuer}'s"
        try:
            claims = jwt.decode(token, key.key, algorithms=[key.algorithm_name] if key.algorithm_name else ALGORITHMS,
                                audience=self.audience, issuer=self.issuer, leeway=30,
                                options={"require": ["exp", "iss", "aud"]})
        except jwt.InvalidAudienceError:
            return f"the JWT was issued for another audience, not {self.audience!r} (auth.audience)"
        except jwt.ExpiredSignatureError:
            return "the JWT has expired; get a new one from your identity provider"
        except jwt.PyJWTError as e:
            return f"the JWT was refused: {str(e)[:200]}"
        user = claims.get(self.claim)
        if not isinstance(user, str) or not user.strip():
            return f"the JWT carries no {self.claim!r} claim (auth.user_claim) to name the hub user"
        return Identity(user.strip()[:200])
