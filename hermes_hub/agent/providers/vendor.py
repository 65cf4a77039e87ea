"""What the SDK-backed providers share: the key and endpoint from hub.json or the vendor's own
environment variables, one SDK client per provider, closing it, and a repr that never shows the key."""

from __future__ import annotations

import os
from typing import Any, Self

from hermes_hub.agent.providers import failures
from hermes_hub.config import AgentSection

NO_KEY = "no-key"  # local servers (Ollama, vLLM) ignore the key, but the SDKs refuse to start without one


class VendorProvider:
    vendor = ""  # "anthropic", "openai": also the prefix of its environment variables

    def __init__(self, cfg: AgentSection) -> None:
        assert cfg.model, f"AgentSection validation requires a model for provider '{self.vendor}'"
        env = self.vendor.upper()
        key = cfg.api_key.get_secret_value() if cfg.api_key else os.environ.get(f"{env}_API_KEY")
        base_url = cfg.base_url or os.environ.get(f"{env}_BASE_URL") or None
        self.model = cfg.model
        self.name = f"{self.vendor}:{cfg.model}"
        self._timeout = cfg.timeout
        self._missing_key = not key and not base_url
        self._client = self.client(key or NO_KEY, base_url, cfg)
        self._endpoint = failures.Endpoint(self.vendor, cfg.model, str(self._client.base_url), f"{env}_API_KEY",
                                           f"{env}_BASE_URL", cfg.max_retries, key)

    def client(self, key: str, base_url: str | None, cfg: AgentSection) -> Any:
        """The vendor SDK's async client."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the HTTP connections; unclosed ones are otherwise closed at garbage collection, maybe after
        their event loop has gone."""
        await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} at {self._endpoint.base_url}>"
