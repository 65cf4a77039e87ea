"""The MCP Inspector CLI (inspector-cli 1.0.3, Node 20) against the hub, over HTTP and over stdio.

One Inspector process per method, as a person debugging would run it. Its exit code is 0 for a
tool result with ``isError``, so both the code and the JSON are checked.
"""

from __future__ import annotations

import json

import anyio
import pytest

from tests.interop.conftest import PYTHON, Run, hub_stdio_args, inspector, served_by
from tests.support import demo, served_hub

pytestmark = pytest.mark.anyio

DEMO = ("calendar", "reminders", "notes")
DEMO_TOOLS = {
    "calendar_query", "calendar_create_event", "reminders_send_reminder",
    "reminders_list_reminders", "notes_create_note", "notes_search_notes",
}


SEEDED = {"id": "seeded", "title": "Seeded note", "body": "written before the hub started"}


@pytest.fixture(scope="module")
async def hub_url(tmp_path_factory):
    """The demo servers behind one hub served over HTTP, READY before the first test.

    The hub lists resources once per server (and again on list_changed); the notes server does not
    announce new notes, so the note the resource tests list is written before the hub starts.
    """
    tmp = tmp_path_factory.mktemp("inspector-http")
    (tmp / "notes.json").write_text(json.dumps({"notes": [SEEDED]}))
    async with served_hub({"mcpServers": {name: demo(name, tmp) for name in DEMO}}, tmp) as url:
        yield url


async def together(*calls) -> list[Run]:
    """Run independent Inspector invocations concurrently; results in the order given."""
    results: list[Run | None] = [None] * len(calls)

    async def one(i: int, call) -> None:
        results[i] = await call

    async with anyio.create_task_group() as tg:
        for i, call in enumerate(calls):
            tg.start_soon(one, i, call)
    return results  # type: ignore[return-value]


async def make_note(url: str, title: str, body: str) -> str:
    made = (await inspector(url, "tools/call", "--tool-name", "notes_create_note",
                            "--tool-arg", f"title={title}", f"body={body}")).json
    assert made.get("isError") is not True, made
    return made["structuredContent"]["id"]


# -- over streamable HTTP ---------------------------------------------------------------------

@pytest.mark.slow
async def test_the_inspector_lists_every_servers_tools_under_their_prefixes_over_http(hub_url):
    listed = (await inspector(hub_url, "tools/list")).json["tools"]
    tools = {t["name"]: t for t in listed}
    assert {t["name"] for server in DEMO for t in served_by(listed, server)} == DEMO_TOOLS
    assert "hermes_memory_recall" in tools  # of the hub's own, hub.own_tools' four are listed
    assert tools["notes_create_note"]["_meta"]["hermes-hub/origin"] == {"server": "notes", "name": "create_note"}
    assert tools["calendar_query"]["inputSchema"]["required"] == ["start_date", "end_date"]


async def test_a_tool_call_from_the_inspector_returns_the_servers_structured_result(hub_url):
    made = (await inspector(hub_url, "tools/call", "--tool-name", "notes_create_note",
                            "--tool-arg", "title=Inspector note", "body=from the CLI")).json
    assert made.get("isError") is not True
    assert made["structuredContent"] == {"id": "inspector-note", "title": "Inspector note", "body": "from the CLI"}
    assert json.loads(made["content"][0]["text"])["id"] == "inspector-note"


async def test_a_tool_error_reaches_the_inspector_as_an_is_error_result_with_exit_code_0(hub_url):
    from_server, from_hub = await together(
        inspector(hub_url, "tools/call", "--tool-name", "reminders_send_reminder",
                  "--tool-arg", "content=Call mum", "time=tomorrow"),
        inspector(hub_url, "tools/call", "--tool-name", "calendar_query", "--tool-arg", "start_date=2026-12-01"),
    )
    assert from_server.code == 0 and from_server.json["isError"] is True
    assert "ISO 8601" in from_server.json["content"][0]["text"]
    assert from_hub.code == 0 and from_hub.json["isError"] is True  # the hub's own schema check
    assert "'end_date' is a required property" in from_hub.json["content"][0]["text"]


async def test_an_unknown_tool_is_a_protocol_error_on_which_the_inspector_exits_1(hub_url):
    result = await inspector(hub_url, "tools/call", "--tool-name", "notes_nope")
    assert result.code == 1
    assert "unknown tool 'notes_nope'" in result.err


@pytest.mark.slow
async def test_the_inspector_lists_and_reads_resources_and_templates_by_their_public_uris(hub_url):
    note = await make_note(hub_url, "Resource note", "readable")  # not listed, but readable via the template
    listed, templates, seeded, read, status = await together(
        inspector(hub_url, "resources/list"),
        inspector(hub_url, "resources/templates/list"),
        inspector(hub_url, "resources/read", "--uri", "notes://notes/note/seeded"),
        inspector(hub_url, "resources/read", "--uri", f"notes://notes/note/{note}"),
        inspector(hub_url, "resources/read", "--uri", "hub://hermes/status"),
    )
    resources = {r["uri"]: r for r in listed.json["resources"]}
    assert [r["uri"] for r in served_by(listed.json["resources"], "notes")] == ["notes://notes/note/seeded"]
    assert resources["notes://notes/note/seeded"]["title"] == "Seeded note"
    assert "hub://hermes/status" in resources
    notes_templates = served_by(templates.json["resourceTemplates"], "notes")
    assert [t["uriTemplate"] for t in notes_templates] == ["notes://notes/note/{id}"]
    assert seeded.json["contents"][0] == {"uri": "notes://notes/note/seeded", "mimeType": "text/markdown",
                                          "text": "# Seeded note\n\nwritten before the hub started"}
    content = read.json["contents"][0]
    assert content["uri"] == f"notes://notes/note/{note}"
    assert content["text"] == "# Resource note\n\nreadable"
    states = {s["name"]: s["state"] for s in json.loads(status.json["contents"][0]["text"])["servers"]}
    assert states == {"calendar": "READY", "reminders": "READY", "notes": "READY"}


async def test_the_inspector_lists_prompts_and_gets_one_with_arguments(hub_url):
    note = await make_note(hub_url, "Prompt note", "summarize me")
    listed, got = await together(
        inspector(hub_url, "prompts/list"),
        inspector(hub_url, "prompts/get", "--prompt-name", "notes_summarize_note", "--prompt-args", f"note_id={note}"),
    )
    prompts = {p["name"]: p for p in served_by(listed.json["prompts"], "notes")}
    assert list(prompts) == ["notes_summarize_note"]
    assert [a["name"] for a in prompts["notes_summarize_note"]["arguments"]] == ["note_id"]
    message = got.json["messages"][0]
    assert message["role"] == "user"
    assert "# Prompt note\n\nsummarize me" in message["content"]["text"]


async def test_the_inspector_sets_the_hubs_log_level(hub_url):
    assert (await inspector(hub_url, "logging/setLevel", "--log-level", "debug")).json == {}


# -- over stdio: the Inspector spawns `python -m hermes_hub serve --stdio` -------------------------

@pytest.mark.slow
async def test_the_inspector_spawns_the_hub_over_stdio_for_every_method(tmp_path):
    args = hub_stdio_args({"mcpServers": {}}, tmp_path)
    tools, bad, resources, read, templates, prompts, no_prompt = await together(
        inspector(PYTHON, "tools/list", server_args=args),
        inspector(PYTHON, "tools/call", "--tool-name", "hermes_hub_status", "--tool-arg", "verbose=true",
                  server_args=args),
        inspector(PYTHON, "resources/list", server_args=args),
        inspector(PYTHON, "resources/read", "--uri", "hub://hermes/status", server_args=args),
        inspector(PYTHON, "resources/templates/list", server_args=args),
        inspector(PYTHON, "prompts/list", server_args=args),
        inspector(PYTHON, "prompts/get", "--prompt-name", "hermes_nothing", server_args=args),
    )
    lists = [tools.json["tools"], resources.json["resources"], templates.json["resourceTemplates"],
             prompts.json["prompts"]]
    assert all(served_by(items, "hermes") == items for items in lists)  # no server behind this hub
    assert "hermes_memory_recall" in {t["name"] for t in tools.json["tools"]}  # hermes_hub_status: called by name
    assert bad.code == 0 and bad.json["isError"] is True
    assert "Invalid arguments for tool 'hermes_hub_status'" in bad.json["content"][0]["text"]
    assert "hub://hermes/status" in {r["uri"] for r in resources.json["resources"]}
    status = json.loads(read.json["contents"][0]["text"])
    assert (status["hub"], status["servers"]) == ("hermes-hub", [])
    assert no_prompt.code == 1 and "unknown prompt 'hermes_nothing'" in no_prompt.err


@pytest.mark.slow
async def test_over_stdio_a_one_shot_inspector_reaches_a_downstream_server_on_its_first_request(tmp_path):
    args = hub_stdio_args({"mcpServers": {"notes": demo("notes", tmp_path)}}, tmp_path)
    made = (await inspector(PYTHON, "tools/call", "--tool-name", "notes_create_note",
                            "--tool-arg", "title=Over stdio", "body=first request", server_args=args)).json
    assert made.get("isError") is not True, made["content"][0]["text"]
    assert made["structuredContent"]["id"] == "over-stdio"
