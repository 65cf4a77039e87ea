"""A trivial downstream MCP server for the benchmarks: one tool, ``echo(text) -> text``.

    python -m bench.echo_server              # stdio
    python -m bench.echo_server --http PORT  # streamable HTTP at http://127.0.0.1:PORT/mcp
    python -m bench.echo_server --tools 999  # plus 999 filler tools (for the tools/list benchmark)
    python -m bench.echo_server --huge-description N  # plus a tool ``huge`` described by one N-letter word
    python -m bench.echo_server --ttl MS     # its lists say ttlMs MS, cacheScope public (2026-07-28 hosts)
"""

from __future__ import annotations

import argparse

from mcp.server import CacheHint, MCPServer

from hermes_hub.demo.command import serve


LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def build_server(extra_tools: int = 0, huge_description: int = 0, ttl_ms: int | None = None) -> MCPServer:
    hints = None if ttl_ms is None else dict.fromkeys(LISTS, CacheHint(ttl_ms=ttl_ms, scope="public"))
    mcp = MCPServer("echo", instructions="Benchmark server: echo(text) returns text unchanged.",
                    cache_hints=hints)  # type: ignore[arg-type]

    @mcp.tool()
    async def echo(text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    async def filler(query: str, limit: int = 10, exact: bool = False) -> str:
        return query

    if huge_description:  # a broken or hostile server (bench/fuzz_bounds.py)
        from bench.fuzz_bounds import one_word

        mcp.add_tool(filler, name="huge", description=one_word(huge_description))

    for i in range(extra_tools):  # a listing the size of a big aggregated catalog
        mcp.add_tool(filler, name=f"tool_{i:04d}",
                     description=f"Filler tool {i}: searches the benchmark corpus for `query`, at most `limit` hits.")
    return mcp


def main(argv: list[str] | None = None) -> None:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--tools", type=int, default=0)
    pre.add_argument("--huge-description", type=int, default=0)
    pre.add_argument("--ttl", type=int, default=None)
    known, rest = pre.parse_known_args(argv)
    serve(lambda: build_server(known.tools, known.huge_description, known.ttl), "python -m bench.echo_server",
          __doc__, rest)


if __name__ == "__main__":
    main()
