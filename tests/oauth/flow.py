"""Hosts signing in to a served hub: the MCP SDK's own OAuth client, the consent page in Chromium,
and a raw flow (httpx2) for the refusals the SDK client never provokes."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.support import toy

TOKENS = {"alice": "alice-token-0123456789abcdef", "root": "root-token-0123456789abcdef"}
CALLBACK = "http://127.0.0.1:9/callback"  # never reached: the browser's request to it is intercepted
SECONDS = 10_000  # Playwright's waits, in ms
HANDSHAKE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "oauth-test", "version": "1"}}}


def hub_config(**sections: Any) -> dict[str, Any]:
    """One toy server, two hub tokens (alice, root the admin), and a toolset ``work``."""
    return {"mcpServers": {"alpha": toy("--name", "alpha")}, "memory": {"embedder": "none"},
            "toolsets": {"work": {"servers": ["alpha"]}},
            "auth": {"tokens": [{"token": TOKENS["alice"], "user": "alice"},
                                {"token": TOKENS["root"], "user": "root", "role": "admin"}]}, **sections}


class Memory:
    """The SDK client's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Consent:
    """Opens the authorization URL in Chromium, signs in on the consent page and approves (or denies);
    the browser's redirect to the client's callback is caught, as a host's loopback listener would."""

    def __init__(self, browser: Any, token: str | None = TOKENS["alice"], decision: str = "approve") -> None:
        self.browser, self.token, self.decision = browser, token, decision
        self.answer: dict[str, str] = {}
        self.page_text = ""

    async def redirect(self, url: str) -> None:
        page = await self.browser.new_page()

        async def catch(route: Any) -> None:
            await route.fulfill(status=200, body="signed in; you may close this window")

        await page.route(CALLBACK + "*", catch)
        await page.goto(url)
        await page.wait_for_selector("#consent", timeout=SECONDS)
        self.page_text = await page.locator("#consent").inner_text()
        if self.token is not None:
            await page.fill("#token", self.token)
        async with page.expect_request(lambda r: r.url.startswith(CALLBACK), timeout=SECONDS) as caught:
            await page.click(f"#{self.decision}")
        self.answer = {k: v[0] for k, v in parse_qs(urlsplit((await caught.value).url).query).items()}
        await page.close()

    async def callback(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=self.answer.get("code", ""), state=self.answer.get("state"))


def sdk_client(url: str, consent: Consent, storage: Memory | None = None, name: str = "Test Host") -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=url, storage=storage or Memory(), redirect_handler=consent.redirect, callback_handler=consent.callback,
        client_metadata=OAuthClientMetadata(client_name=name, redirect_uris=[CALLBACK],
                                            grant_types=["authorization_code", "refresh_token"],
                                            response_types=["code"], token_endpoint_auth_method="none"))


@asynccontextmanager
async def signed_in(url: str, auth: OAuthClientProvider) -> AsyncIterator[Any]:
    """An MCP ``Client`` whose HTTP client signs in with ``auth`` when the hub answers 401."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


class Raw:
    """The authorization-code flow by hand (register, authorize, the consent form, token), for the
    refusals a well-behaved client never provokes. ``http`` is an ``httpx2.AsyncClient``."""

    def __init__(self, http: Any, mcp_url: str) -> None:
        self.http, self.mcp = http, mcp_url
        self.base = mcp_url.removesuffix("/mcp")
        self.client_id = ""
        self.verifier, self.challenge = pkce()

    async def register(self, name: str = "Raw Client") -> dict[str, Any]:
        answer = await self.http.post(f"{self.base}/register", json={
            "client_name": name, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
        assert answer.status_code == 201, answer.text
        self.client_id = answer.json()["client_id"]
        return answer.json()

    async def authorize(self, **override: str) -> httpx2.Response:
        params = {"response_type": "code", "client_id": self.client_id, "redirect_uri": CALLBACK,
                  "code_challenge": self.challenge, "code_challenge_method": "S256", "state": "st4te",
                  "resource": self.mcp, **override}
        return await self.http.get(f"{self.base}/authorize", params={k: v for k, v in params.items() if v != ""})

    async def consent(self, consent_url: str, token: str = TOKENS["alice"], decision: str = "approve") -> httpx2.Response:
        return await self.http.post(consent_url, data={"token": token, "decision": decision})

    async def code(self, **override: str) -> str:
        asked = await self.authorize(**override)
        assert asked.status_code == 302, asked.text
        answered = await self.consent(asked.headers["location"])
        assert answered.status_code == 303, answered.text
        query = parse_qs(urlsplit(answered.headers["location"]).query)
        assert query["state"] == ["st4te"]
        return query["code"][0]

    async def token(self, **form: str) -> httpx2.Response:
        return await self.http.post(f"{self.base}/token", data={"client_id": self.client_id, **form})

    async def exchange(self, code: str, **override: str) -> httpx2.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
                "code_verifier": self.verifier, "resource": self.mcp, **override}
        return await self.token(**{k: v for k, v in form.items() if v != ""})

    async def tokens(self) -> dict[str, Any]:
        answer = await self.exchange(await self.code())
        assert answer.status_code == 200, answer.text
        return answer.json()

    async def status(self, access_token: str, url: str | None = None) -> int:
        """The HTTP status of an initialize sent to ``url`` (default /mcp) with ``access_token``."""
        answer = await self.http.post(url or self.mcp, json=HANDSHAKE, headers={
            "Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"})
        return answer.status_code
