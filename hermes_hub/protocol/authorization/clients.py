"""Who a ``client_id`` is: a client that registered (RFC 7591, kept in the store) or, when the id is an
https URL, the client ID metadata document found there (fetched by ``fetch.Fetcher``, cached a few minutes).

    client = await clients.get("https://app.example/oauth/client.json")
    client, why = await clients.lookup(client_id)     # why: the sentence end saying why it was refused

A metadata document must name itself (``client_id`` equal to its URL) and its redirect URIs; such a
client is public (no secret: PKCE protects its codes). Plain http is accepted only on a loopback
address, and only with ``auth.client_metadata_private`` (tests, local tools): by default the fetch
goes to public addresses only, ends within 5 s, reads at most 64 KiB and runs at most 4 at once.

What ``/register`` keeps is bounded (``bounds``: each field, at most 10 redirect URIs, allowed schemes
only), and a client that never signed in is forgotten a day after it registered; while ``MAX_UNUSED``
such clients are kept, registration is refused until they expire.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import timedelta
from urllib.parse import urlsplit

from mcp.server.auth.provider import RegistrationError
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from hermes_hub.protocol.authorization.bounds import metadata_problem
from hermes_hub.protocol.authorization.fetch import Busy, Fetcher, Refused
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import utcnow

log = logging.getLogger("hermes_hub.protocol.authorization")
CACHE_SECONDS = 300.0
CACHE_ENTRIES = 256
MAX_CLIENT_ID = 2048
UNUSED_LIFETIME = timedelta(days=1)  # a registered client that never signed in is forgotten after this
MAX_UNUSED = 2000  # registered clients that never signed in, kept at once


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
    def __init__(self, store: Store, *, private: bool = False) -> None:
        self.store = store
        self.fetcher = Fetcher(private=private)
        self._documents: dict[str, tuple[float, OAuthClientInformationFull | None, str | None]] = {}

    async def get(self, client_id: str) -> OAuthClientInformationFull | None:
        return (await self.lookup(client_id))[0]

    async def lookup(self, client_id: str) -> tuple[OAuthClientInformationFull | None, str | None]:
        """The client, or None and (for a metadata document) why it was refused."""
        if not client_id or len(client_id) > MAX_CLIENT_ID:
            return None, None
        if is_metadata_url(client_id):
            return await self._document(client_id)
        info = await self.store.find_oauth_client(client_id)
        return (OAuthClientInformationFull.model_validate_json(info) if info else None), None

    async def register(self, client: OAuthClientInformationFull) -> None:
        if problem := metadata_problem(client):
            code = "invalid_redirect_uri" if problem.startswith("redirect URI") else "invalid_client_metadata"
            raise RegistrationError(code, f"{problem}; this hub keeps nothing more, so register again within it")
        now = utcnow()
        await self.store.prune_oauth_clients(unused_before=now - UNUSED_LIFETIME)
        if (await self.store.oauth_counts(at=now))["unused_clients"] >= MAX_UNUSED:
            log.warning("client registration refused: %d registered clients never signed in", MAX_UNUSED)
            raise RegistrationError("invalid_client_metadata", (
                f"this hub already keeps {MAX_UNUSED} registered clients that never signed in, the most it keeps; "
                f"each is forgotten {UNUSED_LIFETIME.days} day after it registered, so try again later, or name "
                f"your client by a client ID metadata document (an https client_id) instead"))
        await self.store.add_oauth_client(client.client_id, client.model_dump_json(exclude_none=True), at=now)

    async def _document(self, url: str) -> tuple[OAuthClientInformationFull | None, str | None]:
        now = time.monotonic()
        cached = self._documents.get(url)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1], cached[2]
        try:
            client, why = await self._fetch(url), None
        except Busy as e:  # the hub's state, not the document's: not cached
            log.warning("client metadata document %s not fetched: %s", url[:200], e)
            return None, str(e)
        except Refused as e:
            client, why = None, str(e)
            log.warning("client metadata document %s refused: %s", url[:200], why)
        if len(self._documents) >= CACHE_ENTRIES:
            self._documents.pop(next(iter(self._documents)))
        self._documents[url] = (now, client, why)
        return client, why

    async def _fetch(self, url: str) -> OAuthClientInformationFull:
        body = await self.fetcher.get(url)
        try:
            data = json.loads(body)
            if not isinstance(data, dict):
                raise Refused("it is not a JSON object")
            if data.get("client_id") != url:
                raise Refused("its client_id is not its own URL")
            if not data.get("redirect_uris"):
                raise Refused("it names no redirect_uris")
            for secret_key in ("client_secret", "client_secret_expires_at"):
                data.pop(secret_key, None)
            data["token_endpoint_auth_method"] = "none"  # a document is public: PKCE, no secret
            data.setdefault("scope", "mcp")
            client = OAuthClientInformationFull.model_validate(data)
        except (ValueError, ValidationError) as e:
            raise Refused(f"it is not valid client metadata ({str(e).splitlines()[0][:200]})") from None
        if problem := metadata_problem(client):
            raise Refused(f"it is not accepted: {problem}")
        return client
