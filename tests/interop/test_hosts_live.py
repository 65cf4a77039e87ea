"""The hub in the MCP hosts people use: Claude Code, Gemini CLI, Qwen Code, Codex and opencode, pinned in
interop/hosts, each run headless against one served hub and a scripted model of ours that speaks the host's
wire format (tests/interop/models.py), in a HOME of its own and failing if it reaches past loopback
(tests/interop/hosts.py). The versions and the commands are in docs/testing.md."""

from __future__ import annotations

import json
import sys
import uuid

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.interop.conftest import run
from tests.interop.hosts import HOSTS, ClaudeCode, Host, require_hosts
from tests.interop.models import ScriptedModel, serve_model
from tests.support import demo, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]
NAMES = list(HOSTS)


@pytest.fixture(scope="module")
def model():
    return ScriptedModel()


@pytest.fixture(scope="module")
async def model_url(model):
    async with serve_model(model) as base:
        yield base


@pytest.fixture(scope="module")
async def hub(tmp_path_factory):
    """One served hub for every host: its own tools and the demo notes server, a real downstream."""
    tmp = tmp_path_factory.mktemp("hub")
    async with serve_process({"mcpServers": {"notes": demo("notes", tmp / "notes")}}, tmp) as served:
        yield served.url


@pytest.fixture(scope="module")
async def hosts(tmp_path_factory, hub, model_url) -> dict[str, Host]:
    """Each host, configured once for the module (tests ask each something new): its model and switches
    written by the test, the hub as `hermes-hub install HOST --url` writes it."""
    require_hosts()
    made = {}
    for name, kind in HOSTS.items():
        made[name] = host = kind(tmp_path_factory.mktemp(name))
        host.attach(model_url)
        await host.install(hub)
    return made


async def audited(hub: str, tool: str) -> list[dict]:
    """The hub's audit rows for ``tool``, newest first, as the hub's own tool reports them."""
    with anyio.fail_after(30):
        async with Client(streamable_http_client(hub)) as client:
            rows = await client.call_tool("hermes_audit_query", {"tool": tool, "limit": 100})
    return json.loads(rows.content[0].text)["calls"]


def marker(host: str) -> str:
    return f"case-{host}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("name", NAMES)
async def test_the_host_lists_the_hub_connected(hosts, name):
    host = hosts[name]
    done = await host.run(host.listing())
    assert host.connected(done.out + done.err), f"{name} mcp list:\n{done.out}\n{done.err}"


@pytest.mark.parametrize("name", NAMES)
async def test_the_model_is_offered_the_hubs_tools_and_a_call_reaches_the_hub_and_its_result_the_model(
        hosts, hub, model, name):
    host, case = hosts[name], marker(name)
    title = f"Hosts check {case}"
    model.queue(case, "notes_create_note", {"title": title, "body": f"written by {name}"})
    done = await host.run(host.prompt(f"{case}: make a note"))

    turns = [asked for asked in model.asked(case) if asked.tools]  # not a title or a classifier
    assert len(turns) >= 2, f"{name} asked its model {len(turns)} time(s) with tools: {done.out[-2000:]}\n{host.logs()}"
    first, *later = turns
    assert all(t.streamed for t in turns) and {t.wire for t in turns} == {host.wire}
    offered = set(first.tools)
    assert {f"{host.prefix}{t}" for t in ("hermes_memory_remember", "hermes_memory_recall", "notes_create_note",
                                          "notes_search_notes")} <= offered, sorted(offered)
    [row] = [r for r in await audited(hub, "notes_create_note") if r["arguments"].get("title") == title]
    assert (row["server"], row["outcome"]) == ("notes", "ok")
    note_id = title.lower().replace(" ", "-")  # the notes server's id: a slug of the title
    assert any(note_id in result for asked in later for result in asked.results), [a.results for a in later]
    assert "The tool said: " in done.out and note_id in done.out  # the model's answer came back out


@pytest.fixture(scope="module")
async def remembered(hosts, hub, model):
    """A fact Claude Code had the hub remember."""
    fact = f"The hosts suite's fact is {uuid.uuid4().hex[:10]}"
    case = marker("remember")
    model.queue(case, "hermes_memory_remember", {"text": fact, "kind": "fact"})
    await hosts["claude"].run(hosts["claude"].prompt(f"{case}: remember this"))
    # a memory's text is kept out of the audit (forgetting must reach it): the row names its length
    rows = [r for r in await audited(hub, "hermes_memory_remember") if r["arguments"].get("kind") == "fact"]
    assert [(r["arguments"]["text"], r["outcome"]) for r in rows] == [(f"<{len(fact)} characters, not audited>", "ok")]
    return fact


@pytest.mark.parametrize("name", [n for n in NAMES if n != "claude"])
async def test_a_memory_made_in_claude_code_is_recalled_in_another_host(hosts, model, remembered, name):
    host, case = hosts[name], marker(name)
    model.queue(case, "hermes_memory_recall", {"query": "the hosts suite's fact"})
    await host.run(host.prompt(f"{case}: what is the fact?"))
    results = [result for asked in model.asked(case) for result in asked.results]
    assert any(remembered in result for result in results), results


async def test_the_stdio_entry_install_writes_works_in_claude_code(model, model_url, tmp_path):
    require_hosts()
    host = ClaudeCode(tmp_path / "claude-stdio")
    host.attach(model_url)
    host.extra["HERMES_DATA_DIR"] = str(tmp_path / "stdio-hub-data")
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"mcpServers": {}}))  # the hub's own tools: nothing to wait for at its start
    installed = await run([sys.executable, "-m", "hermes_hub", "install", "claude-code", "--config", str(config)], 60,
                          host.env())
    assert installed.code == 0, installed.err
    entry = json.loads((host.home / ".claude.json").read_text())["mcpServers"]["hermes"]
    assert entry["type"] == "stdio" and entry["args"][-4:] == ["serve", "--stdio", "--config", str(config)]

    listed = await host.run(host.listing())
    assert host.connected(listed.out), listed.out
    case = marker("stdio")
    fact = f"The stdio hub's fact is {uuid.uuid4().hex[:10]}"
    model.queue(case, "hermes_memory_remember", {"text": fact})
    await host.run(host.prompt(f"{case}: remember this"))
    first, *later = [asked for asked in model.asked(case) if asked.tools]
    assert {"mcp__hermes__hermes_memory_recall", "mcp__hermes__hermes_memory_remember"} <= set(first.tools)
    assert any('"status":"added"' in result.replace(" ", "") for asked in later for result in asked.results)


async def test_claude_code_searching_for_tools_loads_the_hubs_always_loaded_ones_at_once(hub, model, model_url,
                                                                                       tmp_path):
    """With its tool search on, Claude Code defers the hub's tools but those marked anthropic/alwaysLoad
    (memory recall and remember), and its search reads each tool's anthropic/searchHint (issue 32 item 4)."""
    require_hosts()
    host = ClaudeCode(tmp_path / "claude-searching")
    host.attach(model_url)
    host.extra["ENABLE_TOOL_SEARCH"] = "true"
    await host.install(hub)
    case = marker("deferring")
    await host.run(host.prompt(f"{case}: say hello"))
    first = next(asked for asked in model.asked(case) if asked.tools)
    offered = {t["name"]: t for t in first.body["tools"]}
    loaded = {n for n, t in offered.items() if n.startswith("mcp__hermes__") and not t.get("defer_loading")}
    assert loaded == {"mcp__hermes__hermes_memory_recall", "mcp__hermes__hermes_memory_remember"}, first.text
    assert offered["mcp__hermes__hermes_memory_recall"].get("input_schema", {}).get("properties")
    # the rest are deferred: named for its search, their schemas not sent
    assert "mcp__hermes__notes_create_note" not in offered and "mcp__hermes__notes_create_note" in first.text

    # its search finds a tool by a word only the hint says: "jot", which notes_create_note's name and
    # description do not (Claude Code's search matches ASCII words; Chinese hint words find nothing there)
    case = marker("hinted")
    model.queue(case, "ToolSearch", {"query": "jot", "max_results": 3})
    await host.run(host.prompt(f"{case}: find a tool"))
    answered = [asked for asked in model.asked(case) if asked.results or asked.tools][1:]
    found = [block.get("tool_name") for asked in answered for message in asked.body["messages"][-1:]
             for part in message.get("content") or [] if isinstance(part, dict) and part.get("type") == "tool_result"
             for block in part.get("content") or [] if isinstance(block, dict)]
    assert "mcp__hermes__notes_create_note" in found, [a.body["messages"][-1] for a in answered]
    with anyio.fail_after(30):
        async with Client(streamable_http_client(hub)) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "notes_create_note")
    assert "jot" not in f"{tool.name} {tool.description}" and "jot" in tool.meta["anthropic/searchHint"]


@pytest.mark.parametrize("reach", ["socket.create_connection(('192.0.2.1', 443), timeout=0.2)",
                                   "socket.create_connection(('2001:db8::1', 443), timeout=0.2)",
                                   "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 53))",
                                   "socket.getaddrinfo('example.com', 443)"])
async def test_a_host_reaching_past_loopback_fails_its_test(tmp_path, reach):
    require_hosts()
    host = ClaudeCode(tmp_path / "reacher")  # any host: the watch is the same strace for all
    script = f"import socket\ntry:\n    {reach}\nexcept OSError:\n    pass\n"
    with pytest.raises(AssertionError, match="tried to reach the internet"):
        await host.run([sys.executable, "-c", script])
