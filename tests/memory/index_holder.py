"""A replica's indexer that claims a batch of message vectors and dies embedding it.

    python -m tests.memory.index_holder postgresql://… 2

Indexes the message terms, claims the first batch of vectors with a lease of the given seconds,
prints ``embedding <first pk> <last pk>`` from inside the embedder, then hangs there until killed.
"""

from __future__ import annotations

import sys

import anyio

from hermes_hub.services.memory.indexer import Indexer
from hermes_hub.infra.storage import open_store
from tests.memory.counting_embedder import CountingEmbedder


class HangingEmbedder(CountingEmbedder):
    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        print("embedding", len(texts), flush=True)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def main(url: str, lease: str) -> None:
    async with open_store(url) as store:
        await Indexer(store, HangingEmbedder(), lease=float(lease)).step()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
