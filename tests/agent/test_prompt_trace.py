"""Debugging a run: ``hermes-hub traces RUN_ID --prompt`` and the trace resource show what each model request
held (instructions in their parts, messages, tools and their sizes) and what the model answered, its
reasoning included, with secrets masked; ``hermes-hub session summarize ID`` folds a session now."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support import PROJECT, serve_process, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

RULES = [  # the summary's rule first: its request quotes the conversation
    {"when": "SUMMARY REQUEST", "text": "Key facts:\n- the user asked the echo tool to say hello"},
    {"when": "say hello through the tool", "reasoning": "The echo tool can say it.",
     "tool_calls": [{"name": "toy_echo", "arguments": {"text": "hello"}}]},
    {"when": "^hello$", "text": "The tool said hello."},
]


def hub_config(tmp_path) -> dict[str, Any]:
    (tmp_path / "model.json").write_text(json.dumps(RULES))
    return {"mcpServers": {"toy": toy()}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
            "agent": {"provider": "scripted", "script": "model.json"},
            "agents": {"brief": {"instructions": "You help with greetings.",
                                 "prompt": {"completion": "Done once the greeting was said."}}}}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_hub", *args], capture_output=True, text=True, timeout=60,
                          cwd=PROJECT)


async def test_traces_prompt_shows_each_request_and_answer_with_reasoning_and_secrets_masked(tmp_path):
    task = "please say hello through the tool; my password is hunter2-very-secret"
    async with serve_process(hub_config(tmp_path), tmp_path) as served:
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host:
                out = (await host.call_tool("hermes_agent_run", {"task": task, "profile": "brief"})).structured_content
                plain = (await host.call_tool("hermes_trace_get", {"run_id": out["run_id"]})).structured_content
                resource = json.loads((await host.read_resource(f"hub://hermes/traces/{out['run_id']}")
                                       ).contents[0].text)
        shown = await anyio.to_thread.run_sync(lambda: cli("traces", out["run_id"], "--prompt", "--config",
                                                           str(served.config)))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "hunter2-very-secret" not in text and "hunter2-very-secret" not in json.dumps(resource)
    first, second = text.split("request 2 ")
    assert first.startswith("request 1 (round 1, scripted:model.json")
    assert "You help with greetings." in first  # the profile's role part
    assert "Method: Plan before acting." in first and "Constraints: Arguments must fit the tool's schema." in first
    assert "Done when: Done once the greeting was said." in first  # the profile's own completion rule
    assert "- toy_echo: Return text unchanged." in first  # the tools part, listed from the catalog
    assert "toy_echo (" in first and "chars)" in first  # each tool's definition size
    assert "[user] please say hello through the tool" in first
    assert "reasoning: The echo tool can say it." in first and 'calls toy_echo {\'text\': \'hello\'}' in first
    assert "the same as in the request before" in second  # instructions unchanged between rounds
    assert "messages: the 1 of the request before, then:" in second
    assert "[tool call_1_1] hello" in second and "answer (end): The tool said hello." in second
    requests = [e for e in resource["events"] if e["kind"] == "request"]
    assert [e["response"]["text"] for e in requests] == ["", "The tool said hello."]
    assert all("prompt" not in e for e in plain["events"])  # hermes_trace_get leaves them out unless asked


async def test_session_summarize_folds_a_session_now_and_prints_what_a_model_will_read(tmp_path):
    async with serve_process(hub_config(tmp_path), tmp_path) as served:
        with anyio.fail_after(90):
            async with Client(streamable_http_client(served.url)) as host:
                out = (await host.call_tool("hermes_agent_run", {"task": "please say hello through the tool"})
                       ).structured_content
        folded = await anyio.to_thread.run_sync(lambda: cli("session", "summarize", out["session_id"], "--config",
                                                            str(served.config)))
        again = await anyio.to_thread.run_sync(lambda: cli("session", "summarize", out["session_id"], "--json",
                                                           "--config", str(served.config)))
        missing = await anyio.to_thread.run_sync(lambda: cli("session", "summarize", "nope", "--config",
                                                             str(served.config)))
    assert folded.returncode == 0, folded.stderr
    assert folded.stdout.strip() == "Key facts:\n- the user asked the echo tool to say hello"
    assert json.loads(again.stdout) == {"session_id": out["session_id"],
                                        "summary": "Key facts:\n- the user asked the echo tool to say hello"}
    assert missing.returncode == 1 and "session" in missing.stderr and "nope" in missing.stderr
