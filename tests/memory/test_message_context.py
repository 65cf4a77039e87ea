"""Messages are embedded in their context, on a real SQLite file: a reply whose subject sits only in the
message before it is found by what it is about, and so is a memory written from it (provenance); and a
memories-only recall, which ranks messages without loading them, leaves their vectors in the index."""

from __future__ import annotations

import anyio
import pytest

from hermes_hub.services.memory import Memories, RecallQuery
from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import NewMessage, SessionRecord, utcnow

pytestmark = pytest.mark.anyio

TOPICS = {  # a toy model of meaning: each topic a direction, each text the mix of the topics it names
    "cats": {"kitten", "cat", "cats", "feline", "purr"},
    "trains": {"train", "station", "platform", "railway"},
    "cooking": {"soup", "oven", "recipe", "baking"},
    "weather": {"rain", "snow", "sunny", "storm"},
}


class TopicEmbedder:
    """The embedding model is the edge of the world: a vector per text from the topics its words name
    (a text that names none points nowhere near any topic)."""

    name = "topics"
    dims = len(TOPICS) + 1

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        out = []
        for text in texts:
            words = {w.strip(".,!?:").lower() for w in text.split()}
            v = [float(len(words & vocab)) for vocab in TOPICS.values()] + [0.0]
            if not any(v):
                v[-1] = 1.0
            norm = sum(x * x for x in v) ** 0.5
            out.append([x / norm for x in v])
        return out


CHAT = [  # (id, text): the reply m9 names no topic; the message before it does
    ("m1", "ana: The train was late again this morning"),
    ("m2", "bob: Our station has a new platform"),
    ("m3", "ana: I tried a new soup recipe"),
    ("m4", "bob: The oven broke while baking bread"),
    ("m5", "ana: More rain is coming tomorrow"),
    ("m6", "bob: A storm closed the railway"),
    ("m7", "ana: Sunny skies by the weekend, they say"),
    ("m8", "ana: Do you still have the kitten from the shelter?"),
    ("m9", "bob: Yes! She sleeps on my desk all day."),
]


async def chat(store, memories: Memories) -> None:
    now = utcnow()
    await store.create_session(SessionRecord("s1", "bob", "chat", now, now))
    await store.append_messages("bob", "s1", [NewMessage(mid, "user", text, now) for mid, text in CHAT])
    await memories.remember("bob", "Bob's pet sleeps on his desk all day", source_message_ids=["m9"])
    for mid, text in CHAT[:7]:  # a memory from each of the other messages, in their own words
        await memories.remember("bob", f"Bob heard: {text.split(': ', 1)[1]}", source_message_ids=[mid])
    with anyio.fail_after(60):
        await memories.wait_idle()


async def test_a_reply_and_the_memory_written_from_it_are_found_by_the_subject_of_the_message_before(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store, \
            Memories(store, embedder=TopicEmbedder()) as memories:
        await chat(store, memories)
        turns = await memories.recall("bob", RecallQuery("feline", limit=2, sources=("sessions",)))
        facts = await memories.recall("bob", RecallQuery("feline", limit=1, sources=("memories",)))
    assert {i.message_id for i in turns} == {"m8", "m9"}  # "feline" is a word neither of them holds
    assert [i.text for i in facts] == ["Bob's pet sleeps on his desk all day"]
    assert (facts[0].provenance or {}).get("message_ids") == ["m9"]


async def test_a_memories_only_recall_keeps_the_message_vectors_it_ranked_without_loading(tmp_path):
    async with open_store(f"sqlite:///{tmp_path}/hub.db") as store, \
            Memories(store, embedder=TopicEmbedder()) as memories:
        await chat(store, memories)
        before = await memories.recall("bob", RecallQuery("feline", limit=2, sources=("sessions",)))
        for _ in range(3):
            await memories.recall("bob", RecallQuery("feline", sources=("memories",)))
        after = await memories.recall("bob", RecallQuery("feline", limit=2, sources=("sessions",)))
    # no word of the question is in any message: only their vectors find these two, before and after
    assert [i.message_id for i in after] == [i.message_id for i in before]
    assert {i.message_id for i in after} == {"m8", "m9"}
