"""What the SDK-backed providers share: the key and endpoint from hub.json or the vendor's own
environment variables, one SDK client per provider, closing it, and a repr that never shows the key."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, Self

from hermes_hub.infra.config import AgentSection
from hermes_hub.infra.models import failures
from hermes_hub.infra.models.base import Reply

log = logging.getLogger("hermes_hub.infra.models")
NO_KEY = "no-key"  # local servers (Ollama, vLLM) ignore the key, but the SDKs refuse to start without one


class VendorProvider:
    vendor = ""  # "anthropic", "openai": also the prefix of its environment variables
    sdk: Any = None  # the vendor SDK module: both name their errors alike (APITimeoutError, APIStatusError...)
    sdk_error: type[Exception] = Exception  # the SDK's base error class

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

    async def send(self, create: Callable[..., Awaitable[Any]], params: dict[str, Any],
                   parse: Callable[[Any], Reply], tools: int) -> Reply:
        """One SDK request, its failures turned into ProviderErrors that say what to fix."""
        if self._missing_key:
            raise failures.missing_key(self._endpoint)
        started = time.perf_counter()
        try:
            response = await create(**params)
        except self.sdk.APITimeoutError:
            raise failures.timed_out(self._endpoint, self._timeout) from None
        except self.sdk.APIConnectionError:
            raise failures.unreachable(self._endpoint) from None
        except self.sdk.APIStatusError as e:
            raise failures.from_status(self._endpoint, e.status_code, e.body) from None
        except self.sdk_error as e:
            raise failures.unreadable(self._endpoint, e) from None
        try:
            reply = parse(response)
        except (AttributeError, TypeError, ValueError) as e:  # a 200 that is not this vendor's answer
            raise failures.unreadable(self._endpoint, e) from None
        log.debug("model request %s: %d messages, %d tools, %d in / %d out tokens, %.0f ms, %s", self.name,
                  len(params["messages"]), tools, reply.usage.input_tokens, reply.usage.output_tokens,
                  (time.perf_counter() - started) * 1000, reply.stop_reason)
        return reply
