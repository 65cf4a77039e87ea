"""Appends to one session as fast as it can, printing each append once it is acknowledged.

    python -m tests.storage.appender sqlite:///path/hub.db

First line ``session <id>``, then ``ack <message_id>`` per committed append, until killed. The
crash-safety test kills it with SIGKILL mid-burst and checks every acknowledged append survived.
"""

from __future__ import annotations

import sys

import anyio

from hermes_hub.services.sessions import Sessions
from hermes_hub.infra.storage import open_store


async def main(url: str) -> None:
    async with open_store(url) as store:
        sessions = Sessions(store)
        s = await sessions.create("crash-test")
        print("session", s.session_id, flush=True)
        i = 0
        while True:
            i += 1
            m = await sessions.append("crash-test", s.session_id, role="user", content=f"append {i} 北京 " * 20)
            print("ack", m.message_id, flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
