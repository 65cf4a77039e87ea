"""Errors raised by hermes-hub. Every message says what went wrong *and* how to fix it.

    HubError
     ├── ConfigError          hub.json is missing, malformed or invalid (carries key paths)
     ├── ServerNotReady       a call reached a server that is not READY
     ├── UnknownName          no tool, prompt or resource with that public name
     ├── DownstreamError      a downstream server failed while serving a request
     ├── StorageError         the store cannot be opened or used (bad storage.url, newer schema)
     ├── NotFound             no such session (or not yours: both answer the same) or token
     ├── InvalidInput         arguments the hub cannot store (bad role, oversized message, bad cursor)
     ├── SessionBusy          another writer or agent run holds the session's lock
     └── Forbidden            the caller's role does not allow this (e.g. reading others' audit)

Failures the *model* should read (bad arguments, a tool that failed) are not raised: they are
returned as tool results with ``isError`` set. These exceptions are for the operator and the host.

Messages reach hosts and models through MCP, so their advice is what those can do (call tools/list,
call hermes_hub_status, retry); the command line rewords that advice as commands to type
(``for_terminal``) or adds them (``cli_hint``).
"""

from __future__ import annotations

import json
import re

# Shown to non-admins instead of a server's error: stderr and errors can quote secrets (a database URL).
ASK_ADMIN = "details are for the hub's admin only: ask the hub's admin"


class HubError(Exception):
    """Base class of every error hermes-hub raises on purpose."""


# What a person at a terminal can run next, for messages that arrive (over MCP, as text) at the CLI.
_CLI_HINTS = [
    (re.compile(r"server '[^']*' is not ready \(state "), "run `hermes-hub servers` to see each server's state"),
    (re.compile(r"unknown tool '"), "list the tools with `hermes-hub tools`"),
    (re.compile(r"unknown prompt '"), "list the prompts with `hermes-hub prompts`"),
    (re.compile(r"unknown resource (template )?'"), "list the resources with `hermes-hub resources`"),
]


def cli_hint(message: str) -> str | None:
    """The terminal command that helps with an error ``message`` from the hub, if there is one."""
    return next((hint for pattern, hint in _CLI_HINTS if pattern.search(message)), None)


# A host's advice, reworded for a person at a terminal: the command to type, not the protocol method.
_FOR_TERMINAL = [
    ("call tools/list for the current names", "`hermes-hub tools` lists the current names"),
    ("call prompts/list for the current names", "`hermes-hub prompts` lists the current names"),
    ("call resources/list and resources/templates/list for the current URIs",
     "`hermes-hub resources` lists the current URIs"),
]


def for_terminal(message: str) -> str:
    """``message`` (written for hosts and models) with its protocol advice replaced by commands to type."""
    for host_words, terminal_words in _FOR_TERMINAL:
        message = message.replace(host_words, terminal_words)
    return message


class ConfigError(HubError):
    """The configuration cannot be used. ``problems`` lists ``(key_path, message)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "hub.json") -> None:
        self.problems = problems
        self.source = source
        lines = [f"{path}: {msg}" if path else msg for path, msg in problems]
        super().__init__(f"{source} is invalid:\n  " + "\n  ".join(lines))


class ServerNotReady(HubError):
    """A request was routed to a server whose connection is not READY."""

    def __init__(self, server: str, state: str, detail: str | None = None) -> None:
        self.server, self.state, self.detail = server, state, detail
        why = f": {detail}" if detail else ""
        super().__init__(
            f"server '{server}' is not ready (state {state}){why}. "
            f"Retry once it is READY; hermes_hub_status shows "
            + ("its state." if detail == ASK_ADMIN else "every server's state and last error.")
        )

    def for_caller(self, is_admin: bool) -> ServerNotReady:
        """This error for a caller: an admin reads the server's error, anyone else ``ASK_ADMIN``."""
        # NEEDS_AUTH's detail is the fix (which login to run), the caller's to read, never a secret
        return self if is_admin or not self.detail or self.state == "NEEDS_AUTH" else ServerNotReady(self.server, self.state, ASK_ADMIN)


class UnknownName(HubError):
    """No catalog entry has this public name."""

    def __init__(self, kind: str, name: str, hint: str = "") -> None:
        self.kind, self.name = kind, name
        super().__init__(f"unknown {kind} '{name}'" + (f"; {hint}" if hint else ""))


class DownstreamError(HubError):
    """A downstream server failed while handling a forwarded request."""

    def __init__(self, server: str, message: str, code: int | None = None, *, http_status: int | None = None,
                 retry_after: float | None = None) -> None:
        self.server, self.code = server, code
        self.http_status = http_status  # an HTTP server's "not now" (429, 502, 503, 504), if that was it
        self.retry_after = retry_after  # seconds it asked the hub to wait (``Retry-After``)
        super().__init__(f"server '{server}': {message}")


class StorageError(HubError):
    """The store cannot be opened or used: unsupported ``storage.url``, unreadable file, newer schema."""


class NotFound(HubError):
    """No such thing *for this caller*. Another user's id gets exactly this error, so ids leak nothing."""

    def __init__(self, kind: str, ident: str, hint: str = "") -> None:
        self.kind, self.ident = kind, ident
        super().__init__(f"{kind} '{ident}' not found" + (f"; {hint}" if hint else ""))


class InvalidInput(HubError):
    """Arguments the hub refuses to store or use; the message names the field and the fix."""


class SessionBusy(HubError):
    """Another writer or agent run holds this session. Raised at once: callers never queue behind it."""

    def __init__(self, session_id: str, detail: str = "") -> None:
        self.session_id = session_id
        why = f" ({detail})" if detail else ""
        super().__init__(
            f"session '{session_id}' is busy: another writer or agent run holds it{why}. "
            f"Retry when it finishes, or use another session; a lock whose holder died expires by itself."
        )


class Forbidden(HubError):
    """The caller is known but its role does not allow this operation."""


def json_mistake(exc: json.JSONDecodeError) -> str:
    """Where a JSON text is broken, in the words that fix it: ``line 3, column 12: a trailing comma ...``.

    The decoder says "Expecting property name enclosed in double quotes" for a trailing comma and for a
    comment alike; people write both (JSONC habits from editors' settings), so each is named, with the
    line of the comma or comment itself rather than of the bracket after it."""
    text, pos = exc.doc, exc.pos

    def at(p: int) -> str:
        line = text.count("\n", 0, p) + 1
        return f"line {line}, column {p - (text.rfind(chr(10), 0, p) + 1) + 1}"

    here = text[pos:pos + 2]
    if here.startswith(("//", "/*", "#")):
        return f"{at(pos)}: comments are not allowed in JSON; remove the comment"
    before = text[:pos].rstrip()
    if before.endswith(",") and text[pos:pos + 1] in ("}", "]"):
        return f"{at(len(before) - 1)}: a trailing comma before '{text[pos]}' (JSON allows none); remove the comma"
    if here.startswith("'"):
        return f"{at(pos)}: JSON strings and keys take double quotes (\"), not single ones (')"
    return f"{at(pos)}: {exc.msg}"
