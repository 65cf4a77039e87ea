"""A handshake-era request whose ``Mcp-Session-Id`` this process does not know: say why and what to do.

Several hub replicas behind a load balancer share their store, but a handshake-era session lives in
the replica that opened it. A request that lands on another replica (or after a restart) gets the
SDK's bare 404 "Session not found"; this rewrites that body so the host (and its operator) reads
that the session is unknown *here*, that a new initialize fixes it, and that the balancer needs
session affinity. Stateless (2026-07-28) requests carry no session and never reach this.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_hub.protocol.upstream.rejection import error_line

UNKNOWN_SESSION = -32001  # the code the MCP spec's examples use for an unknown session
HINT = ("unknown session{sid}: this hub replica does not know it (it was opened on another replica, or this one "
        "restarted); reconnect: send a new initialize without Mcp-Session-Id. Behind a load balancer, "
        "handshake-era clients need session affinity (see the README, 'Running several hubs')")


class UnknownSession:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sid = dict(scope.get("headers") or ()).get(b"mcp-session-id") if scope["type"] == "http" else None
        if not sid:
            await self.app(scope, receive, send)
            return
        rewriting = False

        async def rewrite(message: Message) -> None:
            nonlocal rewriting
            if message["type"] == "http.response.start" and message["status"] == 404:
                rewriting = True
                body = error_line(None, UNKNOWN_SESSION, HINT.format(sid=f" {sid.decode(errors='replace')[:64]!r}"))
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in (b"content-length",
                                                                                               b"content-type")]
                await send({**message, "headers": [*headers, (b"content-type", b"application/json"),
                                                   (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
            if rewriting:  # the SDK's own body of that 404: already replaced
                return
            await send(message)

        await self.app(scope, receive, rewrite)
