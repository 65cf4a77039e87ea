"""``hermes-hub chat`` as a person (or a script) uses it: the real command as a process, a real hub it
spawns over stdio (or one served over HTTP), the scripted model; lines in on stdin, stdout read as it comes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_hub import Hub
from tests.support import demo, free_port, served_hub, toy

pytestmark = pytest.mark.anyio

HERMES_HUB = str(Path(sys.executable).parent / "hermes-hub")  # the installed command, as a person runs it
RULES = [
    {"when": "say hello through the tool", "tool_calls": [{"name": "toy_echo", "arguments": {"text": "hello"}}]},
    {"when": "^hello$", "text": "The tool said hello."},
    {"when": "and again", "text": "Still here."},
    {"when": "take your time", "tool_calls": [{"name": "toy_sleep", "arguments": {"seconds": 60}}]},
    {"when": "remind me to call mom", "tool_calls": [{"name": "reminders_send_reminder", "arguments": {
        "content": "call mom", "time": "2026-12-05T18:00:00+01:00"}}]},
    {"when": "rem-1", "text": "Reminder set for Saturday 18:00."},
    {"when": "The person declined", "text": "OK, I did not set it."},
]


def write_hub(folder: Path, **agent: Any) -> dict[str, Any]:
    """A hub.json in ``folder`` (where the chat runs): the toy server, the demo reminders server and a
    scripted model; sending a reminder needs the person's yes."""
    (folder / "model.json").write_text(json.dumps(RULES))
    config = {
        "mcpServers": {"toy": toy(), "reminders": demo("reminders", folder / "demo")},
        "storage": {"url": f"sqlite:///{folder}/hub.db"},
        "agent": {"provider": "scripted", "script": str(folder / "model.json"), "confirm": ["*_send*"], **agent},
    }
    (folder / "hub.json").write_text(json.dumps(config))
    return config


def chat(folder: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``hermes-hub chat ARGS`` run to its end in ``folder`` with ``stdin`` piped in."""
    return subprocess.run([HERMES_HUB, "chat", *args], cwd=folder, input=stdin, capture_output=True, text=True,
                          timeout=120)


class Session:
    """A running ``hermes-hub chat``: write lines to it, read its output line by line as it comes."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.out = BufferedByteReceiveStream(process.stdout)  # type: ignore[arg-type]
        self.seen: list[str] = []

    async def send(self, line: str) -> None:
        await self.process.stdin.send((line + "\n").encode())  # type: ignore[union-attr]

    async def expect(self, text: str, seconds: float = 60) -> str:
        """The first new line containing ``text``; fails after ``seconds``, showing what came instead."""
        try:
            with anyio.fail_after(seconds):
                while True:
                    line = (await self.out.receive_until(b"\n", 1 << 20)).decode()
                    self.seen.append(line)
                    if text in line:
                        return line
        except (TimeoutError, anyio.EndOfStream, anyio.IncompleteRead):
            raise AssertionError(f"no line with {text!r}; the chat printed:\n" + "\n".join(self.seen)) from None


@asynccontextmanager
async def running_chat(folder: Path, *args: str) -> AsyncIterator[Session]:
    with (folder / "chat.err").open("wb") as err:
        async with await anyio.open_process([HERMES_HUB, "chat", *args], cwd=folder, stderr=err,
                                            env=dict(os.environ)) as process:
            try:
                yield Session(process)
            finally:
                if process.returncode is None:
                    process.terminate()
                with anyio.move_on_after(10, shield=True):
                    await process.wait()


async def history(folder: Path, session_id: str) -> list[tuple[str, str]]:
    """The session's messages as the hub stored them, read through a hub on the same hub.json."""
    async with Hub.from_file(folder / "hub.json") as hub, hub.client() as host:
        with anyio.fail_after(30):
            page = await host.call_tool("hermes_session_history", {"session_id": session_id})
    return [(m["role"], m["content"]) for m in page.structured_content["messages"]]


def stop_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("["))


def session_of(stdout: str) -> str:
    return stop_line(stdout).rsplit("session ", 1)[1].rstrip("]")


@pytest.mark.slow
async def test_one_turn_shows_each_round_the_answer_and_the_stop_reason_and_a_second_turn_stays_in_the_session(
        tmp_path):
    write_hub(tmp_path)
    run = chat(tmp_path, stdin="please say hello through the tool\n/session\nand again\n/quit\n")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1:6] == ["  round 1/5: thinking", "  round 1/5: calling toy_echo", "  round 2/5: thinking",
                          "The tool said hello.", lines[5]]
    sid = session_of(run.stdout)
    assert lines[5] == f"[answered after 2 rounds, 1 tool call; session {sid}]"
    assert lines[6] == f"session {sid}"  # /session
    assert lines[7:] == ["  round 1/5: thinking", "Still here.", f"[answered after 1 round, 0 tool calls; session {sid}]"]
    said = await history(tmp_path, sid)
    assert [c for r, c in said if r == "user"] == ["please say hello through the tool", "and again"]
    assert said[-1] == ("assistant", "Still here.")


@pytest.mark.slow
async def test_a_session_is_resumed_by_id_and_a_wrong_id_is_a_clear_error(tmp_path):
    write_hub(tmp_path)
    first = chat(tmp_path, "--once", "please say hello through the tool", "--json")
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout)["session_id"]
    resumed = chat(tmp_path, "--session", sid, "--once", "and again")
    wrong = chat(tmp_path, "--session", "ses_nothing", "--once", "and again")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[0] == f"resuming session {sid}; last message (assistant): The tool said hello."
    assert session_of(resumed.stdout) == sid
    assert [c for r, c in await history(tmp_path, sid) if r == "user"] == ["please say hello through the tool",
                                                                           "and again"]
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert "error: cannot resume session ses_nothing: session 'ses_nothing' not found" in wrong.stderr


@pytest.mark.parametrize("answer, said, stop, reminders", [
    ("y", "Reminder set for Saturday 18:00.", "answered", ["call mom"]),
    ("n", "OK, I did not set it.", "declined", []),
])
@pytest.mark.slow
async def test_a_tool_that_needs_confirmation_asks_on_the_terminal_and_runs_only_on_yes(tmp_path, answer, said, stop,
                                                                                       reminders):
    write_hub(tmp_path)
    run = chat(tmp_path, stdin=f"remind me to call mom on saturday\n{answer}\n/quit\n")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    question = lines.index("  round 1/5: calling reminders_send_reminder") + 1
    assert lines[question] == ('? The assistant wants to call reminders_send_reminder with content: "call mom"; '
                               'time: "2026-12-05T18:00:00+01:00". Allow it? [y/n]')
    assert said in lines and stop_line(run.stdout).startswith(f"[{stop} after 2 rounds")
    stored = json.loads((tmp_path / "demo" / "reminders.json").read_text())["reminders"]
    assert [r["content"] for r in stored] == reminders


@pytest.mark.slow
async def test_ctrl_c_cancels_the_run_in_progress_and_the_chat_goes_on_in_the_same_session(tmp_path):
    write_hub(tmp_path)
    async with running_chat(tmp_path) as chat_process:
        await chat_process.send("take your time")
        await chat_process.expect("round 1/5: calling toy_sleep")
        chat_process.process.send_signal(signal.SIGINT)
        await chat_process.expect("(cancelled: the hub stopped the run")
        await chat_process.send("please say hello through the tool")
        await chat_process.expect("The tool said hello.")
        answered = await chat_process.expect("[answered after 2 rounds")
        await chat_process.send("/quit")
        with anyio.fail_after(30):
            assert await chat_process.process.wait() == 0
    said = await history(tmp_path, session_of(answered))
    assert said[0] == ("user", "take your time")  # the cancelled run and the next one share the session
    assert ("assistant", "The run was cancelled before it finished.") in said
    assert said[-1] == ("assistant", "The tool said hello.")


@pytest.mark.slow
async def test_a_hub_over_http_is_reached_with_a_token_and_refuses_the_chat_without_one(tmp_path):
    config = write_hub(tmp_path)
    config["auth"] = {"tokens": [{"token": "s3cret-chat-token", "user": "ana"}]}
    (tmp_path / "served").mkdir()
    async with served_hub(config, tmp_path / "served") as url:  # the chat runs where no hub.json is
        with_token = chat(tmp_path / "served", "--url", url, "--token", "s3cret-chat-token", "--once",
                          "please say hello through the tool")
        without = chat(tmp_path / "served", "--url", url, "--once", "hi")
    assert with_token.returncode == 0, with_token.stderr
    assert "The tool said hello." in with_token.stdout.splitlines()
    assert without.returncode == 1
    assert without.stderr.startswith(f"error: {url} answered 401: this hub needs a token: pass --token or set "
                                     f"HERMES_TOKEN")


async def test_a_wrong_url_or_a_missing_config_is_a_clear_error_and_a_failing_exit_code(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    nobody = chat(tmp_path, "--url", url, "--once", "hi")
    no_config = chat(tmp_path, "--once", "hi")
    assert nobody.returncode == 1 and nobody.stdout == ""
    assert nobody.stderr.startswith(f"error: cannot connect to {url} (ConnectError")
    assert "is the hub running (`hermes-hub serve`)" in nobody.stderr
    assert no_config.returncode == 2
    assert no_config.stderr.strip() == ("error: no hub config at hub.json: run the chat where hub.json is, give "
                                        "--config PATH, or --url http://HOST:PORT/mcp of a running hub")


@pytest.mark.slow
async def test_an_interactive_chat_keeps_the_hubs_log_in_a_file_it_names_once(tmp_path):
    config = write_hub(tmp_path)
    config["mcpServers"]["broken"] = {"command": str(tmp_path / "no-such-server")}  # the hub warns about it
    (tmp_path / "hub.json").write_text(json.dumps(config))
    data = tmp_path / "data"
    env = {**os.environ, "HERMES_DATA_DIR": str(data)}
    run = subprocess.run([HERMES_HUB, "chat"], cwd=tmp_path, input="please say hello through the tool\n/quit\n",
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert "The tool said hello." in run.stdout
    assert run.stderr == f"(the hub's log goes to {data / 'chat.log'})\n"  # named once; nothing else over the chat
    assert "[broken] FAILED" in (data / "chat.log").read_text()
    once = subprocess.run([HERMES_HUB, "chat", "--once", "please say hello through the tool"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert once.returncode == 0 and "(the hub's log goes to" not in once.stderr  # a script keeps its stderr
