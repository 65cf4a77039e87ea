"""The store's part for the hub's own OAuth (``hermes_hub.protocol.authorization``): registered clients, grants
(what a person approved), the flow's secrets as hashes, and the upkeep that keeps what anonymous callers
leave bounded: clients that registered but never signed in are pruned, pending requests are counted."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from hermes_hub.infra.storage.records import OAuthGrantRecord, OAuthTokenRecord


class OAuthStore(Protocol):
    """The hub's own OAuth (``hermes_hub.protocol.authorization``): clients, grants, and the flow's secrets as hashes."""

    async def add_oauth_client(self, client_id: str, info: str, *, at: datetime) -> None:
        """Keep a client's metadata (JSON), replacing what was kept under that id."""

    async def find_oauth_client(self, client_id: str) -> str | None: ...

    async def add_oauth_grant(self, record: OAuthGrantRecord) -> None: ...

    async def find_oauth_grant(self, grant_id: str) -> OAuthGrantRecord | None: ...

    async def list_oauth_grants(self, user_id: str | None = None) -> list[OAuthGrantRecord]: ...

    async def revoke_oauth_grant(self, grant_id: str, *, at: datetime) -> bool:
        """End a grant, and with it every token issued under it; False if none was live."""

    async def add_oauth_token(self, record: OAuthTokenRecord) -> None: ...

    async def find_oauth_token(self, token_hash: str) -> tuple[OAuthTokenRecord, OAuthGrantRecord | None] | None:
        """The secret with this hash and its grant (None for a pending request)."""

    async def spend_oauth_token(self, token_hash: str, *, at: datetime) -> bool:
        """Mark a code or refresh token used; True only for the one call that spent it."""

    async def delete_oauth_token(self, token_hash: str) -> bool: ...

    async def prune_oauth_tokens(self, *, expired_before: datetime) -> int:
        """Delete secrets that expired before then; return how many."""

    # --- upkeep (issue 30, item 6): what anonymous callers leave stays bounded -----------------------

    async def prune_oauth_clients(self, *, unused_before: datetime) -> int:
        """Delete registered clients kept since before then that no grant names (never signed in); how many."""

    async def oauth_counts(self, *, at: datetime) -> dict[str, int]:
        """``{"clients", "unused_clients", "requests"}``: registered clients, those no grant names, and
        pending authorization requests still live (undecided, unexpired) at ``at``."""
