"""``subscriptions/listen`` (2026-07-28 hosts) per person: every stream hears the endpoint's shared events
(list changes) and only its own caller's resource updates (their inbox), never another person's.

    listening = Listening(announcer.bus, identify)        # the server's on_subscriptions_listen
    await listening.updated("ana", "hub://hermes/inbox")  # ana's listening hosts hear it; bob's do not
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated

Listener = Callable[[Any], None]


class PersonalBus:
    """The shared bus's events, plus the ones published here for one person."""

    def __init__(self, shared: InMemorySubscriptionBus) -> None:
        self.shared = shared
        self.own: set[Listener] = set()

    async def publish(self, event: Any) -> None:
        for listener in list(self.own):
            listener(event)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        off = self.shared.subscribe(listener)
        self.own.add(listener)

        def unsubscribe() -> None:
            off()
            self.own.discard(listener)
        return unsubscribe


class Listening:
    def __init__(self, shared: InMemorySubscriptionBus, identify: Callable[[Any], Any]) -> None:
        self.shared, self.identify = shared, identify
        self._people: dict[str, tuple[PersonalBus, ListenHandler]] = {}

    async def __call__(self, ctx: Any, params: Any) -> Any:
        user = self.identify(ctx).user_id  # fails closed: an HTTP request without a caller is refused
        if user not in self._people:
            bus = PersonalBus(self.shared)
            self._people[user] = (bus, ListenHandler(bus))  # type: ignore[arg-type]
        return await self._people[user][1](ctx, params)

    async def updated(self, user_id: str, uri: str) -> None:
        if user_id in self._people:
            await self._people[user_id][0].publish(ResourceUpdated(uri=uri))
