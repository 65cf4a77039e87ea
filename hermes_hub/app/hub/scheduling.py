"""The hub's part of scheduled runs: the book the tools use, the inbox, and the firing loop it starts.

    hub.schedules.create(caller, {"task": "...", "at": "2026-12-02T10:00:00+01:00"})
    hub.scheduler.stats          # planned, fired, done, failed, missed, retried, lost, refused (for /metrics)
"""

from __future__ import annotations

from typing import Any

from hermes_hub.core.builtins.schedule_tools import schedule_items
from hermes_hub.infra.call import ADMIN
from hermes_hub.core.schedules import Inbox, Schedules, Scheduler, clock_from_env
from hermes_hub.core.schedules.inbox import hub_secret
from hermes_hub.core.schedules.runner import agent_fire


class Scheduling:
    """Made with the hub; ``start(loops)`` once its store is open (a hub with ``scheduling`` False never fires)."""

    def __init__(self, hub: Any) -> None:  # the Hub (not imported: it imports this module)
        self.hub = hub
        self.clock = clock_from_env()  # the real clock, or HERMES_FAKE_NOW's (a test seam); tests may swap it
        self.inbox = Inbox(secret=lambda: hub_secret(hub.vault), webhook_of=self.webhook_of, modern=self.modern)
        self.book = Schedules(lambda: hub.store, lambda: hub.config, self.clock, self.new_session, self.trace_uri)
        self.scheduler: Scheduler | None = None
        hub.builtins.add(*schedule_items(lambda: self.book, lambda: self.inbox))

    def use_clock(self, clock: Any) -> None:
        """Run on ``clock`` (a ``ManualClock`` in tests); before the hub starts."""
        self.clock = self.book.clock = clock

    def trace_uri(self, run_id: str) -> str:
        prefix = self.hub.config.hub.prefix
        return f"hub://{prefix}/traces/{run_id}" if prefix else f"hub://traces/{run_id}"

    async def modern(self, user_id: str) -> None:
        """2026-07-28 hosts of ``user_id`` listening for their inbox, on every endpoint, hear it changed."""
        prefix = self.hub.config.hub.prefix
        for ep in self.hub.endpoints.values():
            if ep.announcer.listening is not None:
                await ep.announcer.listening.updated(user_id, f"hub://{prefix}/inbox" if prefix else "hub://inbox")

    def webhook_of(self, user_id: str) -> str | None:
        cfg = self.hub.config.schedules
        return cfg.notify_users.get(user_id) or cfg.notify

    async def role_now(self, user_id: str) -> str | None:
        """The role ``user_id``'s live credentials give today: the local user (stdio) is an admin; anyone else
        has what their live hub tokens say, wherever they were made (None: none is live, runs are refused);
        with ``auth.issuer``, one who never had a hub token is the identity provider's, a plain user."""
        if user_id == self.hub.local.user_id:
            return ADMIN
        return await self.hub.authenticator.role_now(user_id, external=self.hub.config.auth.issuer is not None)

    async def new_session(self, user_id: str, session_id: str) -> object:
        return await self.hub.sessions.get(user_id, session_id)

    def start(self, loops: Any) -> Scheduler:
        hub = self.hub
        fire = agent_fire(hub._agent, lambda: hub.config, lambda: hub.sessions, lambda: hub.store, self.role_now,
                          hub.audit_action)
        self.scheduler = Scheduler(hub.store, self.clock, fire, settings=lambda: hub.config.schedules,
                                   inbox=self.inbox, trace_uri=self.trace_uri)
        self.book.changed = self.scheduler.wake
        loops.start_soon(self.scheduler.run)
        return self.scheduler
