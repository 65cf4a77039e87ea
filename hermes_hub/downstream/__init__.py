"""Downstream: one supervised connection per configured MCP server."""

from hermes_hub.downstream.connection import Connection, State
from hermes_hub.downstream.pool import Pool

__all__ = ["Connection", "Pool", "State"]
