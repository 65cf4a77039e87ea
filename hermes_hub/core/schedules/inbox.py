"""Where a finished, failed or missed occurrence reaches its person: the inbox resource's subscribers
(``resources/updated`` for ``hub://hermes/inbox``), the log, and a signed webhook.

    X-Hermes-Signature: sha256=<hex HMAC-SHA256 of the body under the hub's webhook secret>

The secret is made once per hub and kept in the vault (``hermes-hub schedules secret`` prints it for the
receiver); a delivery is retried with backoff, then logged as failed. The body never holds the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from hermes_hub.infra.storage.timetable import OccurrenceRecord

log = logging.getLogger("hermes_hub.core.schedules")
SIGNATURE_HEADER = "X-Hermes-Signature"
SECRET_KIND, SECRET_NAME, SECRET_OWNER = "schedules", "webhook-secret", ""  # a hub-wide vault entry
ATTEMPTS = 4  # one delivery and three retries
BACKOFF = 0.5  # seconds before the first retry; doubles
TIMEOUT = 10.0
ANSWER_CHARS = 4000  # of an answer a webhook carries (the inbox has it whole)
Notify = Callable[[], Awaitable[None]]


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat()


def entry(o: OccurrenceRecord, trace_uri: Callable[[str], str]) -> dict[str, Any]:
    """One inbox item, as the resource, the webhook and the tools show it."""
    return {"occurrence_id": o.occurrence_id, "schedule_id": o.schedule_id, "task": o.task[:200], "state": o.state,
            "due_at": iso(o.due_at), "fired_at": iso(o.fire_at), "finished_at": iso(o.finished_at),
            "attempts": o.attempts, "answer": o.answer, "stop_reason": o.stop_reason, "error": o.error,
            "missed": o.missed, "run_id": o.run_id, "session_id": o.session_id,
            "trace": trace_uri(o.run_id) if o.run_id else None}


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Inbox:
    """Tells a person's subscribed hosts and webhook that their inbox has a new item."""

    def __init__(self, secret: Callable[[], Awaitable[str]] | None = None,
                 webhook_of: Callable[[str], str | None] = lambda user: None,
                 modern: Callable[[str], Awaitable[None]] | None = None) -> None:
        self._watchers: dict[str, dict[Hashable, Notify]] = {}
        self.modern = modern  # tells a person's 2026-07-28 hosts (subscriptions/listen)
        self.secret = secret
        self.webhook_of = webhook_of
        self.stats = {"arrived": 0, "notified": 0, "webhooks_sent": 0, "webhooks_failed": 0}

    def watch(self, user_id: str, watcher: Hashable, notify: Notify) -> None:
        self._watchers.setdefault(user_id, {})[watcher] = notify

    def unwatch(self, watcher: Hashable) -> None:
        for watchers in self._watchers.values():
            watchers.pop(watcher, None)

    async def arrived(self, o: OccurrenceRecord, item: dict[str, Any]) -> None:
        """``o`` just finished: every host of its person that subscribed hears ``resources/updated``."""
        for notify in list(self._watchers.get(o.user_id, {}).values()):
            try:
                await notify()
                self.stats["notified"] += 1
            except Exception:  # noqa: BLE001 - a host that went away must not stop the others
                log.debug("an inbox subscriber could not be told", exc_info=True)
        if self.modern is not None:
            await self.modern(o.user_id)
        self.stats["arrived"] += 1  # every host told (the webhook follows)
        url = self.webhook_of(o.user_id)
        if url and self.secret is not None:
            await self.deliver(url, {"event": "schedule.occurrence", "user_id": o.user_id, **item})

    async def deliver(self, url: str, payload: dict[str, Any]) -> bool:
        body = json.dumps({**payload, "answer": (payload.get("answer") or "")[:ANSWER_CHARS]},
                          ensure_ascii=False).encode()
        secret = await self.secret()  # type: ignore[misc]
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(secret, body),
                   "X-Hermes-Delivery": str(payload.get("occurrence_id", ""))}
        problem = ""
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            for attempt in range(ATTEMPTS):
                if attempt:
                    await anyio.sleep(BACKOFF * 2 ** (attempt - 1))  # backoff between deliveries
                try:
                    r = await http.post(url, content=body, headers=headers)
                    if r.status_code < 300:
                        self.stats["webhooks_sent"] += 1
                        return True
                    problem = f"HTTP {r.status_code}"
                except httpx2.HTTPError as e:
                    problem = type(e).__name__
        self.stats["webhooks_failed"] += 1
        where = urlsplit(url)  # no credentials or query in the log
        log.warning("the schedules webhook %s://%s%s did not take occurrence %s after %d attempts (%s)", where.scheme,
                    where.hostname, where.path, payload.get("occurrence_id"), ATTEMPTS, problem)
        return False


async def hub_secret(vault: Any) -> str:
    """The hub's webhook secret, made on first use (a replica that raced keeps the one stored first)."""
    found = await vault.get(SECRET_OWNER, SECRET_KIND, SECRET_NAME)
    if found is None:
        await vault.put(SECRET_OWNER, SECRET_KIND, SECRET_NAME, secrets.token_urlsafe(32))
        found = await vault.get(SECRET_OWNER, SECRET_KIND, SECRET_NAME)
    return found
