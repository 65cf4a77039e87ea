"""The edge of the world for these tests: a hosted MCP server behind OAuth 2.1, with its own authorization
server on the same origin, served over real HTTP on a free port.

It speaks the wire formats the MCP authorization spec names: 401 with ``WWW-Authenticate: Bearer
resource_metadata=...`` (RFC 9728), protected-resource and authorization-server metadata (RFC 8414),
dynamic registration (RFC 7591), authorization code with PKCE S256 (auto-approved: the "person" consents
at once, as the account the browser names in ``account=``, default ``crm-user``), refresh tokens
(rotated); its tool ``account`` answers whose account the presented access token belongs to. Knobs the tests turn: ``expires_in``, ``refresh_ok``, ``revoke_access()``.
Every secret it hands out is kept in ``issued`` so a test can look for it where it must not be.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.support import serve_asgi


class Protected:
    def __init__(self, expires_in: int = 3600) -> None:
        self.expires_in = expires_in
        self.refresh_ok = True
        self.base = ""
        self.clients: dict[str, list[str]] = {}  # client_id -> redirect URIs
        self.codes: dict[str, tuple[str, str, str]] = {}  # code -> (client_id, challenge, redirect_uri)
        self.subjects: dict[str, str] = {}  # code, access or refresh token -> the account it acts for
        self.access: dict[str, float] = {}  # access token -> expiry (time.time())
        self.refresh: set[str] = set()
        self.issued: list[str] = []  # every code, access and refresh token handed out
        self.refreshes = 0  # refresh grants answered with new tokens
        self.refused = 0  # 401s sent to /mcp
        self.authorizations = 0

    def revoke_access(self) -> None:
        self.access.clear()

    def _secret(self, kind: str) -> str:
        value = f"{kind}-{secrets.token_urlsafe(18)}"
        self.issued.append(value)
        return value

    # -- the authorization server -----------------------------------------------------------------------

    async def _prm(self, request: Request) -> Response:
        return JSONResponse({"resource": f"{self.base}/mcp", "authorization_servers": [self.base],
                             "scopes_supported": ["crm:read"]})

    async def _asm(self, request: Request) -> Response:
        return JSONResponse({
            "issuer": self.base, "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token", "registration_endpoint": f"{self.base}/register",
            "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["crm:read"]})

    async def _register(self, request: Request) -> Response:
        body = await request.json()
        client_id = f"client-{len(self.clients) + 1}"
        self.clients[client_id] = body["redirect_uris"]
        return JSONResponse({**body, "client_id": client_id, "token_endpoint_auth_method": "none"}, status_code=201)

    async def _authorize(self, request: Request) -> Response:
        q = request.query_params
        if q.get("client_id") not in self.clients or q.get("redirect_uri") not in self.clients[q["client_id"]]:
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        if q.get("code_challenge_method") != "S256" or q.get("resource") != f"{self.base}/mcp":
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        self.authorizations += 1
        code = self._secret("code")
        self.codes[code] = (q["client_id"], q["code_challenge"], q["redirect_uri"])
        self.subjects[code] = q.get("account", "crm-user")[:64]  # the account the person signed in with
        return RedirectResponse(f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}", 302)

    async def _token(self, request: Request) -> Response:
        form = await request.form()
        subject = self.subjects.pop(str(form.get("code") or form.get("refresh_token")), "")
        if form.get("grant_type") == "authorization_code":
            client_id, challenge, redirect_uri = self.codes.pop(str(form.get("code")), ("", "", ""))
            verifier = str(form.get("code_verifier", ""))
            made = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if not client_id or made != challenge or form.get("redirect_uri") != redirect_uri:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
        elif form.get("grant_type") == "refresh_token":
            if not self.refresh_ok or str(form.get("refresh_token")) not in self.refresh:
                return JSONResponse({"error": "invalid_grant", "error_description": "refresh token revoked"},
                                    status_code=400)
            self.refresh.discard(str(form.get("refresh_token")))  # rotated
            self.refreshes += 1
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        access, refresh = self._secret("at"), self._secret("rt")
        self.access[access] = time.time() + self.expires_in
        self.refresh.add(refresh)
        self.subjects[access] = self.subjects[refresh] = subject
        return JSONResponse({"access_token": access, "token_type": "Bearer", "expires_in": self.expires_in,
                             "refresh_token": refresh, "scope": "crm:read"})

    # -- the protected MCP server -----------------------------------------------------------------------

    def app(self) -> Any:
        mcp = MCPServer("crm")

        @mcp.tool()
        def whoami() -> str:
            """Who the hub is signed in as."""
            return "signed in to the CRM"

        @mcp.tool()
        def account(ctx: Context) -> str:
            """Whose CRM account the hub's access token belongs to."""
            token = ((ctx.headers or {}).get("authorization") or "").removeprefix("Bearer ")
            return f"account of {self.subjects.get(token, '(nobody)')}"

        inner = mcp.streamable_http_app(stateless_http=True)
        outer = Starlette(routes=[
            Route("/.well-known/oauth-protected-resource/mcp", self._prm),
            Route("/.well-known/oauth-authorization-server", self._asm),
            Route("/register", self._register, methods=["POST"]),
            Route("/authorize", self._authorize),
            Route("/token", self._token, methods=["POST"]),
        ])

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "lifespan" or (scope["type"] == "http" and scope["path"].startswith("/mcp")):
                if scope["type"] == "http" and not self._allowed(scope):
                    self.refused += 1
                    response = JSONResponse({"error": "invalid_token"}, status_code=401, headers={
                        "WWW-Authenticate": f'Bearer resource_metadata="{self.base}/.well-known/'
                                            f'oauth-protected-resource/mcp"'})
                    await response(scope, receive, send)
                    return
                await inner(scope, receive, send)
                return
            await outer(scope, receive, send)

        return app

    def _allowed(self, scope: dict[str, Any]) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"").decode()
        token = header.removeprefix("Bearer ")
        return header.startswith("Bearer ") and self.access.get(token, 0) > time.time()


@asynccontextmanager
async def serving(protected: Protected) -> AsyncIterator[str]:
    """Serve ``protected`` on a free port; yields the MCP URL (…/mcp) once it listens."""
    def make(base: str) -> Any:
        protected.base = base
        return protected.app()

    async with serve_asgi(make) as base:
        yield f"{base}/mcp"
