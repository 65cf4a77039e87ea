"""Issue 16, item 2: a long word, a huge description or a long stderr line cannot take the hub down.

A served ``hermes-hub serve`` is attacked as in the issue (bob, a user with a token, searches a lazy
toolset for one random word of 60,000 and 150,000 letters; a reload adds a server whose tool
description is one word of a million letters, another of two million) while ``/healthz`` is probed
every 50 ms and the hub's RSS sampled (``bench.fuzz_bounds.watched``): every call answers within
5 s, ``/healthz`` within 1 s throughout, RSS grows less than 200 MB, and SIGTERM still stops it.
The caps themselves are checked in-process below.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.fuzz_bounds import HEALTHZ_TARGET_S, RSS_GROWTH_TARGET_MB, Watch, watched
from hermes_hub.core.aggregation.catalog import MAX_DESCRIPTION_CHARS
from hermes_hub.downstream.framing import read_lines
from hermes_hub.downstream.transports import MAX_STDERR_LINE, _lines
from hermes_hub.infra.errors import InvalidInput
from hermes_hub.infra.storage.search import MAX_TERM_CHARS, terms
from hermes_hub.core.toolsets.search import EMBED_QUERY_CHARS, MAX_QUERY_CHARS, ToolIndex
from hermes_hub.core.toolsets.tokens import CHARS_PER_TOKEN, tokenizer
from hermes_hub.core.toolsets.typos import MAX_LENGTH, Typos
from tests.fixtures.toy_server import one_word
from tests.support import as_user, serve_process, toy

pytestmark = pytest.mark.anyio

BOB, ROOT = "bob-test-token-00000000000", "root-test-token-0000000000"
ANSWER_S = 5.0


def config(**servers: Any) -> dict[str, Any]:
    """A lazy toolset at /mcp/lazy, tokens for bob and root; no embedder: its model loads in the
    background at a time of its own, which would blur what is measured (the capped query's embedding
    is checked in-process below)."""
    return {"mcpServers": {"toy": toy(), **servers}, "toolsets": {"lazy": {"expose": "lazy"}},
            "memory": {"embedder": "none"},
            "auth": {"tokens": [{"token": BOB, "user": "bob"}, {"token": ROOT, "user": "root", "role": "admin"}]}}


def base_of(url: str) -> str:
    return url.removesuffix("/mcp")


def found(result: types.CallToolResult) -> list[str]:
    assert not result.is_error, result.content
    return [t["name"] for t in json.loads(result.content[0].text)["tools"]]


async def warm(url: str) -> None:
    """Load the embedder and the tokenizer (once per process, ~100 MB each) before any baseline."""
    async with as_user(f"{url}/lazy", BOB) as bob:
        await bob.call_tool("hermes_tools_search", {"query": "echo a text"})
    async with as_user(url, ROOT) as root:
        await root.call_tool("hermes_hub_status", {})


def assert_healthy(w: Watch) -> None:
    assert w.probes > 0 and w.unanswered == 0, w
    assert w.healthz_max_s < HEALTHZ_TARGET_S, f"/healthz took {w.healthz_max_s:.2f} s"
    assert w.rss_growth_mb < RSS_GROWTH_TARGET_MB, f"RSS grew {w.rss_growth_mb:.0f} MB"


@pytest.mark.slow
async def test_a_tool_search_for_one_huge_word_answers_within_5_s_while_healthz_answers_within_1_s(tmp_path):
    async with serve_process(config(), tmp_path) as served:
        await warm(served.url)
        async with as_user(f"{served.url}/lazy", BOB) as bob, watched(base_of(served.url), served.proc.pid) as w:
            for length in (60_000, 150_000):
                with anyio.fail_after(ANSWER_S):
                    result = await bob.call_tool("hermes_tools_search", {"query": one_word(length)})
                assert not result.is_error
            with anyio.fail_after(ANSWER_S):  # the same words with a real request in front still find it
                hits = found(await bob.call_tool("hermes_tools_search",
                                                 {"query": f"echo my text back {one_word(150_000)}"}))
    assert_healthy(w)
    assert hits[0] == "toy_echo"


@pytest.mark.slow
async def test_a_reload_adding_million_letter_descriptions_leaves_the_hub_answering_and_sigterm_stops_it(tmp_path):
    notices, changes = anyio.create_memory_object_stream[None](100)

    async def on_message(msg: Any) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            notices.send_nowait(None)

    async def described(root: Client, names: list[str]) -> list[dict[str, Any]]:
        result = await root.call_tool("hermes_tools_describe", {"names": names})
        return json.loads(result.content[0].text)["tools"]

    async with notices, changes, serve_process(config(), tmp_path) as served:
        await warm(served.url)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ROOT}"}, timeout=30)
        async with http, Client(streamable_http_client(f"{served.url}/lazy", http_client=http), mode="legacy",
                                message_handler=on_message) as root, \
                watched(base_of(served.url), served.proc.pid) as w:
            huge = {"huge1m": toy("--name", "huge1m", "--huge-description", "1000000"),
                    "huge2m": toy("--name", "huge2m", "--huge-description", "2000000")}
            served.config.write_text(json.dumps(config(**huge)))
            with anyio.fail_after(ANSWER_S):
                await root.call_tool("hermes_hub_reload", {})
            names = ["huge1m_huge", "huge2m_huge"]
            with anyio.fail_after(30):  # the new servers start; hosts hear list_changed as each comes in
                async for _ in changes:
                    if len(tools := await described(root, names)) == 2:
                        break
            with anyio.fail_after(ANSWER_S):  # their tools are indexed and found
                hits = found(await root.call_tool("hermes_tools_search", {"query": "huge", "limit": 10}))
        assert_healthy(w)
        assert set(names) <= set(hits)
        description = {t["name"]: t["description"] for t in tools}["huge2m_huge"]
        assert len(description) < MAX_DESCRIPTION_CHARS + 100 and "cut from 2,000,000 characters" in description
        began = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(15):
            await anyio.to_thread.run_sync(served.proc.wait)
        assert time.monotonic() - began < 15


@pytest.mark.slow
async def test_hub_status_and_status_json_answer_200_with_a_two_million_letter_description(tmp_path):
    cfg = config(huge=toy("--name", "huge", "--huge-description", "2000000"))
    async with serve_process(cfg, tmp_path) as served:
        await warm(served.url)
        async with as_user(served.url, ROOT) as root, watched(base_of(served.url), served.proc.pid) as w, \
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {ROOT}"}, timeout=30) as http:
            with anyio.fail_after(ANSWER_S):
                status = await root.call_tool("hermes_hub_status", {})
                page = await http.get(f"{base_of(served.url)}/status.json")
    assert_healthy(w)
    assert not status.is_error, status.content
    assert page.status_code == 200, page.text[:300]
    assert {s["name"]: s["state"] for s in page.json()["servers"]}["huge"] == "READY"


# -- the caps, in-process ---------------------------------------------------------------------------


def test_a_word_past_the_typo_cap_is_neither_filed_nor_corrected_but_one_at_the_cap_is():
    at_cap, past_cap = "a" * (MAX_LENGTH - 1) + "b", "a" * MAX_LENGTH + "b"
    typos = Typos([at_cap, past_cap])
    assert typos.near("a" * (MAX_LENGTH - 2) + "b") == [at_cap]  # one letter missing
    assert past_cap not in typos
    assert typos.near(past_cap[:-1] + "c") == []
    assert typos.near(one_word(60_000)) == []


async def test_a_query_past_the_cap_still_finds_a_tool_by_the_words_it_starts_with():
    tools = [types.Tool(name="reminders_send", description="Send a reminder at a time.", input_schema={}),
             types.Tool(name="calendar_query", description="List calendar events.", input_schema={})]
    query = "remind me to call the bank " + "tomorrow " * (MAX_QUERY_CHARS // 9) + one_word(150_000)
    hits = await ToolIndex().search(tools, query, limit=1)
    assert [h.name for h in hits] == ["reminders_send"]


async def test_a_tool_described_by_a_million_letter_word_is_still_found_by_its_name():
    tools = [types.Tool(name="huge_thing", description=one_word(1_000_000), input_schema={}),
             types.Tool(name="notes_create", description="Create a note.", input_schema={})]
    with anyio.fail_after(ANSWER_S):
        hits = await ToolIndex().search(tools, "the huge thing", limit=1)
    assert [h.name for h in hits] == ["huge_thing"]


class Recording:
    """An embedder that records what it is asked to embed (the ``Embedder`` protocol, no model)."""

    name, dims = "recording", 2

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        self.texts += texts
        return [[1.0, 0.0] for _ in texts]


async def test_the_embedder_reads_at_most_the_first_500_characters_of_a_query():
    tools = [types.Tool(name="notes_create", description=one_word(1_000_000), input_schema={})]
    index = ToolIndex(embedder := Recording())
    await index.warm(tools)
    await index.search(tools, one_word(150_000))
    assert max(map(len, embedder.texts)) == EMBED_QUERY_CHARS


def test_tokens_of_a_text_too_long_for_the_tokenizer_are_counted_on_its_head_and_extrapolated():
    count = tokenizer()[1]
    word = one_word(2_000_000)
    assert count(word) == pytest.approx(count(word[:100_000]) * 20, rel=0.01)
    assert count("hello world") < 5
    assert count("x" * 2_000_000) > 2_000_000 / (CHARS_PER_TOKEN * 4)


def test_a_session_search_term_past_the_cap_is_refused_with_what_to_do():
    with pytest.raises(InvalidInput, match=f"at most {MAX_TERM_CHARS} characters"):
        terms("budget " + one_word(MAX_TERM_CHARS + 1))
    with pytest.raises(InvalidInput, match="more than 16 terms"):
        terms(" ".join(f"w{i}" for i in range(200_000)))
    assert terms('"new york" budget Budget') == ["new york", "budget"]


async def _read(expression: str, limit: int) -> list[tuple[bytes, int]]:
    """The lines a child writes on its stdout (``expression``, Python), as the hub reads a server's."""
    script = f"import sys; sys.stdout.write({expression}); sys.stdout.flush()"
    async with await anyio.open_process([sys.executable, "-c", script]) as proc:
        return [pair async for pair in _lines(proc.stdout, limit)]


async def test_a_50_mb_stderr_line_is_kept_to_its_first_4_kb_and_read_in_linear_time():
    with anyio.fail_after(10):  # quadratic buffering took minutes for this
        got = await _read("'e' * 50_000_000 + '\\nnext\\n'", MAX_STDERR_LINE)
    assert [(len(line), size) for line, size in got] == [(MAX_STDERR_LINE, 50_000_000), (4, 4)]


async def test_a_20_mb_stdout_message_comes_through_whole_under_a_limit_of_32_mb():
    script = "import sys; sys.stdout.write('m' * 20_000_000 + '\\n'); sys.stdout.flush()"
    with anyio.fail_after(10):
        async with await anyio.open_process([sys.executable, "-c", script]) as proc:
            got = [line async for line in read_lines(proc.stdout, 32_000_000)]
    assert [len(line) for line in got] == [20_000_000]  # type: ignore[arg-type]


@pytest.mark.slow
async def test_a_schema_pattern_that_backtracks_exponentially_is_matched_in_linear_time(tmp_path):
    servers = {"regex": toy("--name", "regex", "--catastrophic-pattern")}
    async with serve_process(config(**servers), tmp_path) as served:
        async with as_user(served.url, BOB) as bob, watched(base_of(served.url), served.proc.pid) as w:
            with anyio.fail_after(ANSWER_S):  # Python's re would take longer than the universe has left
                refused = await bob.call_tool("regex_match", {"code": "a" * 60 + "!"})
                accepted = await bob.call_tool("regex_match", {"code": "a" * 60})
    assert_healthy(w)
    assert refused.is_error and "does not match '^(a+)+$'" in refused.content[0].text
    assert not accepted.is_error and accepted.content[0].text == "matched"


def test_patterns_re2_cannot_take_are_left_to_the_server_and_additional_properties_still_count():
    from hermes_hub.core.aggregation.arguments import ArgumentCheck

    check = ArgumentCheck("t", {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(?=a)a+$"}},
                                "patternProperties": {"^(b+)+$": {"type": "integer"}}, "additionalProperties": False})
    assert check.problems({"x": "zzz"}) == []  # a lookahead: not checked by the hub
    problems = check.problems({"b" * 60 + "!": 1, "bb": "two"})
    assert any("was unexpected" in p for p in problems) and any("'two' is not of type 'integer'" in p for p in problems)
