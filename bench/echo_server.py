"""A trivial downstream MCP server for the benchmarks: one tool, ``echo(text) -> text``.

    python -m bench.echo_server              # stdio
    python -m bench.echo_server --http PORT  # streamable HTTP at http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

from mcp.server import MCPServer

from servers._cli import serve


def build_server() -> MCPServer:
    mcp = MCPServer("echo", instructions="Benchmark server: echo(text) returns text unchanged.")

    @mcp.tool()
    async def echo(text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    return mcp


def main(argv: list[str] | None = None) -> None:
    serve(build_server, "python -m bench.echo_server", __doc__, argv)


if __name__ == "__main__":
    main()
