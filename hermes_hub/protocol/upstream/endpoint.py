"""One place hosts connect to: ``/mcp`` or ``/mcp/<toolset>``, with its view, server and list_changed stream."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_hub.core.toolsets.view import View
from hermes_hub.protocol.upstream.server import Announcer, HubServer


@dataclass
class Endpoint:
    toolset: str | None  # None: the whole catalog at /mcp
    view: View
    server: HubServer
    announcer: Announcer
    pending: set[str] = field(default_factory=set)  # list kinds changed since the last announcement

    @property
    def path(self) -> str:
        return "/mcp" if self.toolset is None else f"/mcp/{self.toolset}"
