"""The command line every demo server shares: stdio by default, ``--http PORT`` for streamable HTTP."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from mcp.server import MCPServer


def serve(build: Callable[[], MCPServer], prog: str, description: str | None,
          argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args(argv)
    server = build()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")
