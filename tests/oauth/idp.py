"""A test identity provider at the edge of the world: OpenID metadata and a JWKS served over real HTTP,
and access tokens signed with its RSA keys (``cryptography`` makes the keys, PyJWT signs)."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class TestIdP:
    __test__ = False  # not a test class

    def __init__(self) -> None:
        self.base = ""  # set once served
        self.keys: dict[str, Any] = {}
        self.jwks_fetches = 0
        self.rotate()

    def rotate(self) -> str:
        """A new signing key (the old ones stay published); its key id."""
        kid = f"key-{len(self.keys) + 1}"
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return kid

    def token(self, kid: str | None = None, key: Any = None, **claims: Any) -> str:
        kid = kid or list(self.keys)[-1]
        now = int(time.time())
        body = {"iss": self.base, "aud": "hermes-hub", "sub": "user-123", "email": "ana@example.com",
                "iat": now, "exp": now + 300, **claims}
        return jwt.encode(body, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def app(self) -> Starlette:
        async def configuration(request: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.base, "jwks_uri": self.base + "/jwks"})

        async def jwks(request: Request) -> JSONResponse:
            self.jwks_fetches += 1
            keys = []
            for kid, key in self.keys.items():
                jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
                keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
            return JSONResponse({"keys": keys})

        return Starlette(routes=[Route("/.well-known/openid-configuration", configuration), Route("/jwks", jwks)])
