"""Holds one session's lock (heartbeat and all) until killed: a replica that dies holding a lock.

    python -m tests.storage.lock_holder postgresql://… alice ses_… 2

Prints ``held`` once the lock is taken.
"""

from __future__ import annotations

import sys

import anyio

from hermes_hub.infra.storage import open_store


async def main(url: str, user_id: str, session_id: str, ttl: str) -> None:
    async with open_store(url) as store, store.session_lock(user_id, session_id, ttl=float(ttl)):
        print("held", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:5])
