"""A FastMCP server with a task-capable tool (fastmcp-tasks, the io.modelcontextprotocol/tasks
extension), run from interop/.venv-tasks by the interop tests:

    interop/.venv-tasks/bin/python interop/tasks-server.py            # stdio
    interop/.venv-tasks/bin/python interop/tasks-server.py --port N   # streamable HTTP at /mcp

`crunch` runs as a background task when the caller speaks the extension (plainly otherwise):
it reports progress and answers after `seconds`; `approve` asks a question first. The task backend
is the in-memory one.
"""

import argparse
import asyncio
from typing import Any

import mcp.types as types

from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension

mcp = FastMCP("crunchy")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=True)
async def crunch(dataset: str, seconds: float = 0.5, ctx: Context = None) -> str:
    """Crunch `dataset` for `seconds`, then say how it went."""
    await ctx.report_progress(0, 1, "crunching")
    await asyncio.sleep(seconds)
    return f"crunched {dataset}"


@mcp.tool(task=True)
async def approve(item: str, ctx: Context = None) -> Any:
    """Ask the person first (the guard pattern: inside a task, the question is one of its input requests)."""
    answer = (ctx.input_responses or {}).get("ok")
    if answer is None:
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(
            message=f"Approve {item}?",
            requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
        return types.InputRequiredResult(input_requests={"ok": ask})
    return f"{item}: {answer.action} {(answer.content or {}).get('ok')}"


@mcp.tool()
def ping() -> str:
    """Answer at once (no task)."""
    return "pong"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    a = parser.parse_args()
    if a.port:
        mcp.run("http", host="127.0.0.1", port=a.port, show_banner=False)
    else:
        mcp.run("stdio", show_banner=False)
