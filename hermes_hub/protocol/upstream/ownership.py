"""Every handshake-era MCP session belongs to the credential that opened it, and its id never reaches a log.

A session id is the only thing that ties a request to a session: whoever presents it may cancel the
session (DELETE) or answer the hub's own requests on it, such as an agent run's "Allow it?" confirmation.
So ``SessionOwner`` names the caller of every /mcp request (the ``Identity`` the bearer middleware left
in the scope, plus a digest of the token it presented) in the form the SDK's session manager checks
(``sdk.session_user``, an unpromised detail of the SDK, as the loggers' names are: ``sdk.SESSION_LOGGERS``):
the manager records the principal when it creates a session (the request that gets the new
``Mcp-Session-Id``) and answers any later request for that session from another principal with the
same 404 "Session not found" as an unknown id (``UnknownSession`` then rewrites both alike). The record
lives and dies with the session, in the replica that holds it; another replica does not know the id at
all and answers 404 too, so the binding holds whichever replica a request reaches.

The principal is the token, not only the user: a token fixes its user and role, and a user's second
credential (another device, a user-role token beside an admin one) must not answer questions asked on
a session the first one opened. A rotated token therefore needs a new initialize, which hosts send on 404;
an OAuth access token is the grant it was issued under, so a refreshed token keeps its sessions.

``hide_session_ids`` removes session ids from the SDK's log messages (it logs them at INFO, and
``hermes-hub serve`` logs INFO): a log reader could otherwise act on a live session.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets

from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_hub.services.identity import IDENTITY_KEY, Identity
from hermes_hub.protocol.upstream.auth import CREDENTIAL_KEY
from hermes_hub.infra.sdk import SESSION_LOGGERS, session_user  # what the SDK checks and logs (see sdk.py)

HIDDEN = "<hidden>"
# Ids the SDK mints are uuid4 (hex, with or without dashes), wherever they appear in a message; ids
# other servers hand out can have any shape, so a word after "session id:" is hidden too.
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_AFTER_LABEL = re.compile(r"(?i)(session[ _]?id:?\s+)(?!<hidden>)\S+")


class SessionOwner:
    """Names each /mcp request's caller for the SDK's session-ownership check (see the module docstring)."""

    def __init__(self, app: ASGIApp, protect: str = "/mcp") -> None:
        self.app, self.protect = app, protect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.protect):
            scope["user"] = session_user(principal(scope))
        await self.app(scope, receive, send)


def principal(scope: Scope) -> str:
    """Who a request's session belongs to: user, role and token digest, as one string.
    A request without an identity (none should pass the bearer middleware) gets a principal of its
    own that matches no session, so it can neither use nor usefully open one."""
    identity = (scope.get("state") or {}).get(IDENTITY_KEY)
    if not isinstance(identity, Identity):
        return "unidentified " + secrets.token_hex(16)
    credential = (scope.get("state") or {}).get(CREDENTIAL_KEY)  # an OAuth grant: the same across its refreshes
    authorization = credential.encode() if credential else dict(scope["headers"]).get(b"authorization", b"")
    digest = hashlib.sha256(authorization).hexdigest() if authorization else None
    return json.dumps([identity.user_id, identity.role, digest])


class _HideSessionIds(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = _AFTER_LABEL.sub(lambda m: m.group(1) + HIDDEN, _UUID.sub(HIDDEN, message))
        if hidden != message:
            record.msg, record.args = hidden, ()
        return True


_FILTER = _HideSessionIds()


def hide_session_ids() -> None:
    """Install the filter on the SDK loggers that write session ids (idempotent). A logger's filter
    sees every record that logger creates, before any handler, whatever the handlers are."""
    for name in SESSION_LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)


hide_session_ids()  # at import: app.py imports this module before any session exists
