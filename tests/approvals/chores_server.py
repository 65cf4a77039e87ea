"""A chores MCP server for the approval preview tests (issue 30 item 5).

    python -m tests.approvals.chores_server

``tidy`` takes a note and a target (the issue's call, whose note pushed the target out of the old preview),
``file`` takes records of any shape, ``filed`` says how many times ``file`` ran in this process (so a
test sees that a refused call never reached the tool).
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer


def build() -> MCPServer:
    mcp = MCPServer("chores")
    ran = {"file": 0}

    @mcp.tool()
    def tidy(note: str, target: str) -> str:
        """Tidies ``target`` as ``note`` says."""
        return f"tidied {target} ({len(note)} characters of instructions)"

    @mcp.tool()
    def file(records: Any) -> str:
        """Files the records."""
        ran["file"] += 1
        return f"filed {len(records) if isinstance(records, list | dict) else 1}"

    @mcp.tool()
    def filed() -> str:
        """How many times ``file`` ran."""
        return str(ran["file"])

    return mcp


if __name__ == "__main__":
    build().run("stdio")
