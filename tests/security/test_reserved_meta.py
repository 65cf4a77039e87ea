"""Issue 30, item 14: a downstream cannot forge the ``_meta`` keys the hub and the protocol reserve. A stdio
server (tests/fixtures/forging_server.py) lists its tool, resource, template and prompt, and answers its call,
read and prompt, with ``hermes-hub/origin`` naming the hub itself, ``io.modelcontextprotocol/related-task``
with a made-up task id, and other reserved keys. A host of the served hub sees none of them: the hub's own
keys (its origin, its serverInfo, its task's id) are the ones there, and the server's own keys
(``com.example/x``, the apps extension's ``ui.resourceUri``) still pass."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.fixtures.forging_server import FORGED, ORIGIN, RELATED
from tests.support import PROJECT, as_user, serve_process
from tests.tasks.host import send, start

pytestmark = pytest.mark.anyio
ANA = "ana-static-token-0123456789"
CONFIG = {"mcpServers": {"forge": {"command": sys.executable, "args": ["-m", "tests.fixtures.forging_server"],
                                   "cwd": str(PROJECT)}},
          "memory": {"embedder": "none"}, "auth": {"tokens": [{"token": ANA, "user": "ana"}]}}


@pytest.fixture(scope="module")
def anyio_backend():
    """Module scope: the three tests share one served hub."""
    return "asyncio"


@pytest.fixture(scope="module")
async def served(tmp_path_factory):
    async with serve_process(CONFIG, tmp_path_factory.mktemp("hub")) as served:
        yield served


@asynccontextmanager
async def legacy_host(url: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ANA}"}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        yield client


def forges(items: list[Any]) -> list[Any]:
    """The listed items of server 'forge' (the hub lists its own too)."""
    return [i for i in items if ((i.meta or {}).get(ORIGIN) or {}).get("server") == "forge"]


def assert_scrubbed(meta: dict[str, Any] | None, where: str) -> None:
    """No forged key is left in ``meta``; the server's own keys are."""
    meta = meta or {}
    forged = [k for k in FORGED if k in meta and meta[k] == FORGED[k]]
    assert not forged, f"{where} still carries the forged {forged}"
    assert RELATED not in meta, where
    assert meta.get("com.example/x") == {"kept": True} and meta.get("com.example.mcp/y") == 1, where


@pytest.mark.slow
async def test_listings_carry_the_hubs_origin_and_none_of_the_servers_forged_reserved_keys(served):
    async with as_user(served.url, ANA) as host:
        with anyio.fail_after(30):
            tools = {t.name: t for t in (await host.list_tools()).tools}
            resources = (await host.list_resources()).resources
            templates = (await host.list_resource_templates()).resource_templates
            prompts = (await host.list_prompts()).prompts
    tool = tools["forge_forge"]
    assert_scrubbed(tool.meta, "the listed tool")
    assert tool.meta[ORIGIN] == {"server": "forge", "name": "forge"}  # the hub's own origin, not "hermes"
    assert tool.meta["ui"]["resourceUri"].startswith("ui://") and tool.meta["ui"]["resourceUri"].endswith("view.html")
    [resource], [template], [prompt] = (forges(resources), forges(templates), forges(prompts))
    for item, key, original in ((resource, "uri", "forge://note"), (template, "uri_template", "forge://note/{id}"),
                                (prompt, "name", "brief")):
        assert_scrubbed(item.meta, f"the listed {type(item).__name__}")
        assert item.meta[ORIGIN] == {"server": "forge", key: original}


async def test_a_call_read_and_prompt_reach_the_host_without_the_forged_keys(served):
    async with as_user(served.url, ANA) as host:
        with anyio.fail_after(30):
            result = await host.call_tool("forge_forge", {})
            [note] = forges((await host.list_resources()).resources)
            read = await host.read_resource(note.uri)
            got = await host.get_prompt("forge_brief", {})
    assert not result.is_error and result.content[0].text == "forged"
    assert_scrubbed(result.meta, "the call's result")
    assert result.meta[types.SERVER_INFO_META_KEY] != FORGED[types.SERVER_INFO_META_KEY]  # the hub's own stamp
    text, link, embedded = result.content
    for block, where in ((text, "a text block"), (link, "a resource_link"), (embedded, "an embedded resource"),
                         (embedded.resource, "the embedded resource's contents")):
        assert_scrubbed(block.meta, where)
    assert read.contents[0].text == "a note"
    assert_scrubbed(read.meta, "the read's result")
    assert_scrubbed(read.contents[0].meta, "the read's contents")
    assert_scrubbed(got.meta, "the prompt's result")
    assert_scrubbed(got.messages[0].content.meta, "the prompt's message")


async def test_a_tasks_result_names_the_hubs_task_not_the_servers_made_up_one(served):
    async with legacy_host(served.url) as host:
        with anyio.fail_after(30):
            task = await start(host, "forge_forge", {})
            result = await send(host, "tasks/result", taskId=task["taskId"])
    assert result["content"][0]["text"] == "forged"
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]} != FORGED[RELATED]
    assert_scrubbed({k: v for k, v in result["_meta"].items() if k != RELATED}, "the task's result")


def test_the_reserved_prefixes_are_the_hubs_and_those_the_spec_reserves_for_mcp():
    from hermes_hub.core.aggregation.reserved import is_reserved

    reserved = ["hermes-hub/origin", "io.modelcontextprotocol/related-task", "dev.mcp/x",
                "org.modelcontextprotocol.api/x", "com.mcp.tools/x", "modelcontextprotocol.io/x", "IO.MCP/x"]
    free = ["com.example.mcp/x", "com.example/x", "ui", "ui/resourceUri", "mcp", "openai/outputTemplate", "progressToken"]
    assert [k for k in reserved if not is_reserved(k)] == [] and [k for k in free if is_reserved(k)] == []
