"""A trivial downstream MCP server for the benchmarks: one tool, ``echo(text) -> text``.

    python -m bench.echo_server              # stdio
    python -m bench.echo_server --http PORT  # streamable HTTP at http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse

from mcp.server import MCPServer


def build_server() -> MCPServer:
    mcp = MCPServer("echo", instructions="Benchmark server: echo(text) returns text unchanged.")

    @mcp.tool()
    async def echo(text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    return mcp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.echo_server", description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args(argv)
    server = build_server()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()
