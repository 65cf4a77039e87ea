"""Upstream: the MCP server hosts connect to, over stdio or streamable HTTP."""
