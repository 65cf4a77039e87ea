"""The OAuth endpoints of a served hub, on the MCP SDK's own handlers:

    GET  /.well-known/oauth-protected-resource[/mcp[/<toolset>]]   RFC 9728: which server issues tokens
    GET  /.well-known/oauth-authorization-server                   RFC 8414 (not with auth.issuer)
    GET  /authorize   POST /token   POST /register   POST /revoke  the SDK's handlers over ``HubProvider``

Every URL they name starts with ``hub.public_url`` when set (behind a reverse proxy), else with the
origin the request was sent to (its Host, which ``HostCheck`` already vetted). With ``auth.issuer``
the protected-resource metadata names that identity provider and the hub issues no tokens itself.

/register and /authorize are anonymous, so each has a ``budgets.Budget`` (per address and hub-wide);
/register's body is capped; /revoke takes a public client's ``client_id`` alone (RFC 7009).

A hub that needs no authentication (``Exposure.required`` false: loopback, no tokens at start) serves none
of them: ``oauth_off_routes`` answers each, and the consent page, 404 saying why, since a host (Codex) takes
any OAuth metadata as "sign in here" and starts a sign-in nobody could finish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenErrorResponse, TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.protocol.authorization.budgets import BodyCap, Budget
from hermes_hub.protocol.authorization.clients import is_metadata_url
from hermes_hub.protocol.authorization.grants import CODE_LIFETIME, DEFAULT_SCOPES, SCOPES
from hermes_hub.protocol.authorization.provider import ORIGIN

REGISTRATIONS_PER_MINUTE, REGISTRATIONS_HUB_WIDE = 20, 60  # from one address, from all of them
AUTHORIZE_PER_MINUTE, AUTHORIZE_HUB_WIDE = 30, 120
MAX_REGISTRATION = 32 * 1024  # bytes of one /register body
MAX_FORM = 64 * 1024  # bytes of one /authorize, /token or /revoke form: a code, a verifier, a URI, a token
REGISTRATION = ClientRegistrationOptions(enabled=True, valid_scopes=list(SCOPES), default_scopes=list(DEFAULT_SCOPES))
WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"
OAUTH_OFF = ("OAuth sign-in is off: this hub needs no authentication (loopback, no tokens), so it serves no "
             "OAuth metadata and no authorization endpoints; create a token with `hermes-hub token create USER` "
             "and restart the hub to turn it on")
# The SDK's words for a refused token request, and what a person does about each.
HINTS = {
    "authorization code has expired": f"authorization code has expired (codes live {CODE_LIFETIME.seconds // 60} "
                                      f"minutes); start the sign-in again from your MCP host",
    "incorrect code_verifier": "incorrect PKCE code_verifier: it does not match the code_challenge sent to "
                               "/authorize (S256)",
    "redirect_uri did not match the one used when creating auth code":
        "redirect_uri differs from the one sent to /authorize; send the same redirect_uri to /token",
    "authorization code does not exist": "unknown, revoked or another client's authorization code; start the "
                                         "sign-in again",
}


def origin(request: Request | Scope, public_url: str | None) -> str:
    if public_url:
        return public_url
    scope = request.scope if isinstance(request, Request) else request
    host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
    return f"{scope.get('scheme', 'http')}://{host}"


def resource_metadata_url(scope: Scope, public_url: str | None, path: str) -> str:
    """Where the protected-resource metadata of the endpoint at ``path`` is (for ``WWW-Authenticate``)."""
    return origin(scope, public_url) + WELL_KNOWN_RESOURCE + path


class _HintedTokens(TokenHandler):
    def response(self, obj: Any) -> Any:
        if isinstance(obj, TokenErrorResponse) and obj.error_description:
            text = obj.error_description
            if "code_verifier" in text and "Field required" in text:
                text = "missing PKCE code_verifier: this hub accepts only authorization codes with PKCE (S256)"
            obj = obj.model_copy(update={"error_description": HINTS.get(text, text)})
        return super().response(obj)


class _AtOrigin:
    """Runs an SDK handler with ``ORIGIN`` set to this request's origin, body bounded as the SDK does."""

    def __init__(self, app: ASGIApp, public_url: str | None) -> None:
        self.app = RequestBodyLimitMiddleware(app, DEFAULT_MAX_REQUEST_BODY_SIZE)
        self.public_url = public_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = ORIGIN.set(origin(scope, self.public_url))
        try:
            await self.app(scope, receive, send)
        finally:
            ORIGIN.reset(token)


class _Authorize(AuthorizationHandler):
    """The SDK's /authorize, saying why a client ID metadata document was refused (the SDK says "not found")."""

    async def handle(self, request: Request) -> Response:
        params = request.query_params if request.method == "GET" else await request.form()
        client_id = params.get("client_id")
        if isinstance(client_id, str) and is_metadata_url(client_id):
            client, why = await self.provider.clients.lookup(client_id)
            if client is None and why:
                return JSONResponse({"error": "invalid_request", "error_description":
                                     f"Client ID {client_id[:200]!r} not found: its client metadata document was not "
                                     f"used because {why}."}, 400, {"cache-control": "no-store"})
        return await super().handle(request)


def _revocation(provider: Any, clients: ClientAuthenticator) -> Callable[[Request], Any]:
    """RFC 7009 /revoke: a public client (``none``) names itself by ``client_id`` alone, a confidential one
    with its secret; a client revokes only its own tokens, and an unknown token is answered 200 too."""

    async def revoke(request: Request) -> Response:
        try:
            client = await clients.authenticate_request(request)
        except AuthenticationError as e:
            return JSONResponse({"error": "invalid_client", "error_description": f"{e.message}: send your client_id "
                                 f"(and your client_secret, if you registered for one)"}, 401)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token or len(token) > 512:
            return JSONResponse({"error": "invalid_request", "error_description": "send the access or refresh token "
                                 "to revoke in the form field token"}, 400)
        found = await provider.load_access_token(token) or await provider.load_refresh_token(client, token)
        if found is not None and found.client_id == client.client_id:
            await provider.revoke_token(found)
        return Response(status_code=200, headers={"cache-control": "no-store", "pragma": "no-cache"})
    return revoke


class _Provider:
    """The running hub's ``HubProvider``, looked up per call (it exists once the store is open)."""

    def __init__(self, get: Callable[[], Any]) -> None:
        self._get = get

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get().provider, name)


def oauth_off_routes() -> list[BaseRoute]:
    """404 with ``OAUTH_OFF`` for every OAuth URL (metadata with any suffix, endpoints, the consent page)."""

    async def off(request: Request) -> Response:
        return JSONResponse({"error": "not_found", "error_description": OAUTH_OFF + "."}, 404)

    methods = ["GET", "HEAD", "POST", "OPTIONS"]
    paths = [f"/.well-known/{name}{{rest:path}}" for name in
             ("oauth-protected-resource", "oauth-authorization-server", "openid-configuration")]
    return [Route(path, off, methods=methods) for path in
            [*paths, "/authorize", "/token", "/register", "/revoke", "/status/authorize/{rest:path}"]]


def oauth_routes(get: Callable[[], Any], paths: list[str], *, public_url: str | None, issuer: str | None,
                 name: str) -> list[BaseRoute]:
    """The routes above; ``get()`` returns the running hub's ``Authorization``."""

    def resource(path: str) -> Callable[[Request], Any]:
        async def metadata(request: Request) -> Response:
            here = origin(request, public_url)
            document = ProtectedResourceMetadata.model_validate({  # strings: an issuer keeps its exact form
                "resource": here + path, "authorization_servers": [issuer or here],
                "scopes_supported": list(DEFAULT_SCOPES), "resource_name": f"{name} {path}"})
            return await ProtectedResourceMetadataHandler(document).handle(request)
        return metadata

    routes: list[BaseRoute] = [
        Route(WELL_KNOWN_RESOURCE + suffix, cors_middleware(resource(path), ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])
        for suffix, path in [("", "/mcp"), *((p, p) for p in paths)]]
    if issuer:
        return routes  # tokens come from the identity provider

    async def server_metadata(request: Request) -> Response:
        here = origin(request, public_url)
        data = build_metadata(AnyHttpUrl(here), None, REGISTRATION, RevocationOptions(enabled=True)).model_dump(
            mode="json", exclude_none=True)
        data.update(issuer=here, client_id_metadata_document_supported=True,  # the issuer exactly, no "/" added
                    token_endpoint_auth_methods_supported=["none", "client_secret_post", "client_secret_basic"])
        return await MetadataHandler(OAuthMetadata.model_validate(data)).handle(request)

    provider: Any = _Provider(get)
    clients = ClientAuthenticator(provider)

    handlers = [("/authorize", _Authorize(provider).handle, ["GET", "POST"]),
                ("/token", _HintedTokens(provider, clients).handle, ["POST"]),
                ("/register", RegistrationHandler(provider, options=REGISTRATION).handle, ["POST"]),
                ("/revoke", _revocation(provider, clients), ["POST"])]
    routes.append(Route("/.well-known/oauth-authorization-server",
                        cors_middleware(server_metadata, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]))
    for path, handle, methods in handlers:
        app: ASGIApp = _AtOrigin(request_response(handle), public_url)
        if path == "/register":
            app = Budget(BodyCap(app, MAX_REGISTRATION, "client metadata", "send at most 10 redirect URIs, each "
                                 "under 2048 characters, and short names"), "client registrations",
                         per_address=REGISTRATIONS_PER_MINUTE, hub_wide=REGISTRATIONS_HUB_WIDE)
        else:
            app = BodyCap(app, MAX_FORM, "form", "a sign-in's form holds a code, a verifier, a redirect URI or a token, "
                          "each under 2048 characters", error="invalid_request")
        if path == "/authorize":
            app = Budget(app, "sign-in requests (/authorize)", per_address=AUTHORIZE_PER_MINUTE,
                         hub_wide=AUTHORIZE_HUB_WIDE)
        if path != "/authorize":  # a browser client (the MCP Inspector) calls these across origins
            methods = [*methods, "OPTIONS"]
            app = CORSMiddleware(app, allow_origins="*", allow_methods=methods, allow_headers=["mcp-protocol-version"])
        routes.append(Route(path, app, methods=methods))
    return routes
