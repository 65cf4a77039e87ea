"""Which protocol era the hub speaks to a downstream server when its ``mode`` is ``"auto"``.

The handshake era first, 2026-07-28 only for a server that refuses the handshake. Why (measured,
interop/README.md, "Python fixture, hub vs direct, and protocol eras"):

- A server that serves both eras (every ``mcp`` 2.3 server does) can *push* sampling, elicitation
  and log requests, and honour ``resources/subscribe``, only on a handshake-era connection; at
  2026-07-28 its pushes fail ("no back-channel") and its subscribe capability is hidden. The hub
  turns pushed requests into input-required rounds for 2026-07-28 hosts (bridge.py) and relays them
  to handshake-era hosts (relay.py), so over the handshake both kinds of host keep everything.
- Its tools that *return* their requests (``Resolve(...)``) work on both eras, so nothing is lost.
- The SDK's own ``"auto"`` cannot tell a dual-era server from a 2026-only one: it opens with
  ``server/discover``, whose answer names only 2026-07-28 even when the handshake is served too, and
  on stdio the first request locks the connection to its era. So the choice is made by opening with
  ``initialize``: same round trips as ``"legacy"`` for every server that accepts it, and one more
  (``server/discover`` on the same connection) for a server that refuses it.
- A handshake without a back-channel (a stateless streamable-HTTP server: no ``Mcp-Session-Id``) cannot
  carry pushed requests either, while 2026-07-28 rounds work there: such a server is asked
  ``server/discover`` after the handshake and spoken to at 2026-07-28 if it answers.
- What the handshake does not give: list changes announced only on the 2026 ``subscriptions/listen``
  bus (``ctx.notify_tools_changed()``); such a server wants ``mode: "2026-07-28"``.

``"legacy"`` keeps the SDK's handshake; a pinned version (``"2026-07-28"``) skips the handshake and asks
``server/discover`` at that version for the server's capabilities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import Client, MCPError
from mcp.client.session import ClientSession
from mcp.types.version import LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.transports import Link
from hermes_hub.infra.sdk import enter_client

HANDSHAKE = "handshake"


def era(protocol_version: str | None) -> str | None:
    """The era of a negotiated version, as status shows it: "handshake" or the 2026 version."""
    if protocol_version is None:
        return None
    return protocol_version if protocol_version in MODERN_PROTOCOL_VERSIONS else HANDSHAKE


def back_channel(cfg: ServerConfig, link: Link) -> Callable[[], bool]:
    """Whether a handshake-era connection over ``link`` can carry requests the server pushes."""
    return lambda: cfg.transport != "http" or link.http_session


async def handshake_first(session: ClientSession, back_channel: Callable[[], bool] = lambda: True) -> None:
    """Negotiate on ``session``: ``initialize``; if refused, or accepted with no back-channel,
    ``server/discover`` and adopt its answer (a refusal stays the error if discovery fails too)."""
    try:
        await session.initialize()
    except MCPError as refused:
        supported = _supported(refused.error.data)
        version = next((v for v in reversed(MODERN_PROTOCOL_VERSIONS) if v in supported), LATEST_MODERN_VERSION)
        try:
            found = types.DiscoverResult.model_validate(await session.send_discover(version))
        except (MCPError, ValidationError):
            raise refused from None  # not a 2026-07-28 server either: the handshake's error says more
        if not any(v in found.supported_versions for v in MODERN_PROTOCOL_VERSIONS):
            raise refused from None
        session.adopt(found)
        return
    if back_channel():
        return
    try:  # a stateless handshake: its pushes have nowhere to go; 2026-07-28 rounds would
        found = types.DiscoverResult.model_validate(await session.send_discover(LATEST_MODERN_VERSION))
    except (MCPError, ValidationError):
        return
    if any(v in found.supported_versions for v in MODERN_PROTOCOL_VERSIONS):
        session.adopt(found)


def _supported(data: Any) -> list[str]:
    """The versions an "unsupported protocol version" error names, if it names any."""
    try:
        return types.UnsupportedProtocolVersionErrorData.model_validate(data).supported or []
    except ValidationError:
        return []


@dataclass
class EraClient(Client):
    """``mcp.Client`` whose ``mode="auto"`` prefers the handshake (see the module doc), and whose pinned
    2026 version learns the server's real capabilities (the SDK's pin assumes none: no tools listed)."""

    back_channel: Callable[[], bool] = lambda: True  # see ``back_channel()``

    async def __aenter__(self) -> EraClient:
        if self.mode == "legacy":
            await super().__aenter__()
            return self

        async def negotiate(session: ClientSession) -> None:
            if self.mode == "auto":
                await handshake_first(session, self.back_channel)
            else:
                session.adopt(types.DiscoverResult.model_validate(await session.send_discover(self.mode)))

        await enter_client(self, negotiate)  # Client.__aenter__ with this negotiation (SDK private parts)
        return self
