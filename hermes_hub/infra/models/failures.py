"""Vendor failures as ProviderErrors that say what to fix, with the API key never in the text.

Both SDKs raise the same three kinds (they share a generator): a status error carrying the HTTP status and
the vendor's JSON body, a connection error, and a timeout. The SDK has already retried the retryable ones
(``agent.max_retries`` times, with backoff and ``retry-after``) before we see them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_hub.infra.models.base import ProviderError


@dataclass(frozen=True)
class Endpoint:
    """Where a provider sends requests, for messages. ``secret`` is only used to scrub it from text."""

    provider: str  # "openai" | "anthropic"
    model: str
    base_url: str
    key_env: str  # e.g. OPENAI_API_KEY
    url_env: str  # e.g. OPENAI_BASE_URL
    retries: int
    secret: str | None = field(default=None, repr=False)

    def scrub(self, text: str) -> str:
        return text.replace(self.secret, "***") if self.secret else text


def missing_key(ep: Endpoint) -> ProviderError:
    return ProviderError(f"no API key for provider '{ep.provider}'; set agent.api_key in hub.json "
                         f"or the {ep.key_env} environment variable")


def unreachable(ep: Endpoint) -> ProviderError:
    return ProviderError(
        f"cannot reach provider '{ep.provider}' at {ep.base_url} (connection failed after {ep.retries} "
        f"retr{'y' if ep.retries == 1 else 'ies'}); check agent.base_url (or {ep.url_env}) and that the server "
        f"is running", retryable=True)


def timed_out(ep: Endpoint, seconds: float) -> ProviderError:
    return ProviderError(f"provider '{ep.provider}' at {ep.base_url} did not answer within {seconds:g} s "
                         f"(model '{ep.model}'); raise agent.timeout or try again later", retryable=True)


def unreadable(ep: Endpoint, err: Exception) -> ProviderError:
    """Anything else the SDK raised, e.g. an answer it cannot parse (a server that is not really compatible)."""
    said = ep.scrub(" ".join(str(err).split()))[:300]
    return ProviderError(f"provider '{ep.provider}' at {ep.base_url} failed for model '{ep.model}' "
                         f"({type(err).__name__}: {said}); check agent.base_url", retryable=True)


def from_status(ep: Endpoint, status: int, body: object) -> ProviderError:
    """The ProviderError for an HTTP error ``status`` with the vendor's JSON ``body``."""
    said = ep.scrub(_vendor_message(body))
    detail = f": {said}" if said else ""
    if status in (401, 403):
        # The vendor's text is left out: OpenAI's 401 echoes part of the key.
        return ProviderError(f"the API key for provider '{ep.provider}' was refused (HTTP {status}); "
                             f"set agent.api_key or {ep.key_env}", status=status)
    if status == 404:
        return ProviderError(f"provider '{ep.provider}' at {ep.base_url} has no model '{ep.model}' (HTTP 404"
                             f"{detail}); check agent.model, and agent.base_url if the server is not the "
                             f"vendor's own", status=status)
    if status == 429:
        return ProviderError(f"provider '{ep.provider}' is rate limiting requests (HTTP 429{detail}), still after "
                             f"{ep.retries} retries; try again later, or raise your quota", retryable=True,
                             status=status)
    if status >= 500:
        return ProviderError(f"provider '{ep.provider}' failed (HTTP {status}{detail}), still after {ep.retries} "
                             f"retries; try again later", retryable=True, status=status)
    if status == 408 or status == 409:
        return ProviderError(f"provider '{ep.provider}' asked to retry (HTTP {status}{detail}), still after "
                             f"{ep.retries} retries; try again later", retryable=True, status=status)
    return ProviderError(f"provider '{ep.provider}' refused the request for model '{ep.model}' (HTTP {status}"
                         f"{detail})", status=status)


def _vendor_message(body: object) -> str:
    """The human part of a vendor's error body: ``{"error": {"message": ...}}`` for both vendors."""
    err = body.get("error", body) if isinstance(body, dict) else body
    msg = err.get("message") if isinstance(err, dict) else err
    return " ".join(str(msg).split())[:300] if msg else ""
