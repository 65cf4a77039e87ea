"""Who a ``client_id`` is: a client that registered (RFC 7591, kept in the store) or, when the id is an
https URL, the client ID metadata document found there (fetched, bounded, cached a few minutes).

    client = await clients.get("https://app.example/oauth/client.json")

A metadata document must name itself (``client_id`` equal to its URL) and its redirect URIs; such a
client is public (no secret: PKCE protects its codes). Plain http is accepted only on a loopback
address, for tests and local tools. The fetch follows no redirect, waits at most a few seconds and
reads at most 64 KiB, so a client id cannot make the hub hang or fill its memory.
"""

from __future__ import annotations

import json
import logging
import time
from urllib.parse import urlsplit

import httpx2
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from hermes_hub.storage import Store
from hermes_hub.storage.records import utcnow

log = logging.getLogger("hermes_hub.authorization")
MAX_DOCUMENT = 64 * 1024
FETCH_TIMEOUT = 5.0
CACHE_SECONDS = 300.0
CACHE_ENTRIES = 256
MAX_CLIENT_ID = 2048


def is_metadata_url(client_id: str) -> bool:
    """True for an https URL with a path (or http on a loopback address): a client ID metadata document."""
    try:
        parts = urlsplit(client_id)
    except ValueError:
        return False
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    return (parts.scheme == "https" or (parts.scheme == "http" and loopback)) and bool(parts.hostname) \
        and parts.path not in ("", "/") and not parts.fragment


class Clients:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._documents: dict[str, tuple[float, OAuthClientInformationFull | None]] = {}
        self.last_error: dict[str, str] = {}  # why a metadata document was refused, for the error page

    async def get(self, client_id: str) -> OAuthClientInformationFull | None:
        if not client_id or len(client_id) > MAX_CLIENT_ID:
            return None
        if is_metadata_url(client_id):
            return await self._document(client_id)
        info = await self.store.find_oauth_client(client_id)
        return OAuthClientInformationFull.model_validate_json(info) if info else None

    async def register(self, client: OAuthClientInformationFull) -> None:
        await self.store.add_oauth_client(client.client_id, client.model_dump_json(exclude_none=True), at=utcnow())

    async def _document(self, url: str) -> OAuthClientInformationFull | None:
        now = time.monotonic()
        cached = self._documents.get(url)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1]
        client = await self._fetch(url)
        if len(self._documents) >= CACHE_ENTRIES:
            self._documents.pop(next(iter(self._documents)))
        self._documents[url] = (now, client)
        return client

    async def _fetch(self, url: str) -> OAuthClientInformationFull | None:
        def refused(why: str) -> None:
            self.last_error[url[:200]] = why
            if len(self.last_error) > CACHE_ENTRIES:
                self.last_error.pop(next(iter(self.last_error)))
            log.warning("client metadata document %s refused: %s", url[:200], why)
            return None

        try:
            async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=False) as http, \
                    http.stream("GET", url, headers={"accept": "application/json"}) as response:
                if response.status_code != 200:
                    return refused(f"it answered HTTP {response.status_code}")
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT:
                        return refused(f"it is larger than {MAX_DOCUMENT} bytes")
        except httpx2.HTTPError as e:
            return refused(f"it could not be fetched ({type(e).__name__})")
        try:
            data = json.loads(body)
            if not isinstance(data, dict):
                return refused("it is not a JSON object")
            if data.get("client_id") != url:
                return refused("its client_id is not its own URL")
            if not data.get("redirect_uris"):
                return refused("it names no redirect_uris")
            for secret_key in ("client_secret", "client_secret_expires_at"):
                data.pop(secret_key, None)
            data["token_endpoint_auth_method"] = "none"  # a document is public: PKCE, no secret
            data.setdefault("scope", "mcp")
            return OAuthClientInformationFull.model_validate(data)
        except (ValueError, ValidationError) as e:
            return refused(f"it is not valid client metadata ({str(e).splitlines()[0][:200]})")
