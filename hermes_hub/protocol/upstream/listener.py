"""The HTTP hub's listening socket, bound before the hub says it is serving.

uvicorn binds inside its own startup and, when the port is taken, logs a bare ``[Errno 98]`` after our
"serving at ..." line. Binding first lets ``serve`` refuse in one sentence that names the port and the
two ways to pick another (``--port``, ``hub.port``), then hands uvicorn the bound socket.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
from typing import Any

from hermes_hub.infra.errors import HubError

STARTUP_FAILURE = 3  # uvicorn's own exit code when its server never started


class CannotListen(HubError):
    """The address or port cannot be listened on; the message says which option picks another."""


def bind(host: str, port: int, source: str = "hub.json") -> tuple[socket.socket, int]:
    """A TCP socket bound to ``host:port`` (an IPv6 literal gets an IPv6 socket) and its port (the one the
    system chose, for port 0), or CannotListen."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a port in TIME_WAIT is free
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise CannotListen(_why(host, port, e, source)) from None
    return sock, sock.getsockname()[1]


def _why(host: str, port: int, e: OSError, source: str) -> str:
    if e.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use (another `hermes-hub serve`?); serve on another with "
                f"--port {port + 1 if port < 65535 else 8601}, or set hub.port in {source}")
    if e.errno == errno.EACCES:
        return (f"cannot listen on {host}:{port}: permission denied (ports below 1024 need privileges); "
                f"use --port with a higher port, or set hub.port in {source}")
    if e.errno in (errno.EADDRNOTAVAIL, socket.EAI_NONAME) or isinstance(e, socket.gaierror):
        return f"cannot listen on {host}: not an address of this machine; use --host, or set hub.host in {source}"
    return f"cannot listen on {host}:{port} ({e.strerror or e}); use --host/--port, or hub.host/hub.port in {source}"


class Demoted(logging.Filter):
    """A logger's INFO records become DEBUG, shown only when it (or ``hermes_hub``) logs DEBUG: a line per HTTP
    request (uvicorn's access log, httpx's "HTTP Request") would be one per health ping, every 5 s per server."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return any(logging.getLogger(name).isEnabledFor(logging.DEBUG) for name in (record.name, "hermes_hub"))


def demote(name: str) -> None:
    """Put ``Demoted`` on the logger ``name`` (once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, Demoted) for f in logger.filters):
        logger.addFilter(Demoted())


def run(app: Any, sock: socket.socket, **options: Any) -> None:
    """``uvicorn.run`` on the already-bound ``sock`` (``options``: uvicorn's ``Config`` keywords)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **options))
    demote("uvicorn.access")  # after Config, which (re)configures uvicorn's loggers
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
