"""A downstream MCP server that costs almost no CPU to start, for the start-up benchmark.

    python -m bench.idle_server [--start-delay S]

It waits ``S`` seconds first (as a server fetching a package or dialing its backend would), then
answers just enough handshake-era JSON-RPC over stdio: ``initialize``, ``tools/list`` (one ``echo``
tool), ``tools/call`` and ``ping``. Standard library only, so ten of them start about as fast as one
even on a small machine: what is left to measure is whether the hub starts them concurrently.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

ECHO = {"name": "echo", "description": "Return text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "idle", "version": "1"}}
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": str(params.get("arguments", {}).get("text", ""))}]}
    if method == "ping":
        return {}
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.idle_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--start-delay", type=float, default=1.0)
    time.sleep(parser.parse_args(argv).start_delay)
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue  # notifications, and answers to requests we never send
        result = answer(msg["method"], msg.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"method not found: {msg['method']}"}
        else:
            reply["result"] = result
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
