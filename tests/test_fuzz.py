"""Fuzzing, the CI cut of ``bench/fuzz.py``: seeded malformed and mutated JSON-RPC messages against a
real ``hermes-hub serve --stdio`` and a real ``hermes-hub serve`` over HTTP, for a 2025-11-25 host
and a 2026-07-28 host. A failure names its seed and case: ``bench.fuzz.case(seed, index, era)``
rebuilds the message.
"""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest

from bench.fuzz import RSS_GROWTH_BOUND_MB, fuzz_http, fuzz_stdio
from bench.fuzz_cases import ERAS
from hermes_hub.protocol.upstream.rejection import MAX_NESTING, misread_request, reject, screen
from tests.support import served_hub, toy, until

pytestmark = pytest.mark.anyio

SEEDS = (11, 12, 13)
PER_SEED = 50  # the first five of each seed are the rare kinds: a 10 MB string, deep nesting, a huge id...


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.slow
async def test_the_hub_answers_every_malformed_message_correctly_and_survives_with_bounded_memory(
    transport, era, tmp_path
):
    fuzz = fuzz_stdio if transport == "stdio" else fuzz_http
    reports = []
    with (tmp_path / "hub.log").open("w") as log:
        for seed in SEEDS:
            work = tmp_path / str(seed)
            work.mkdir()
            with anyio.fail_after(120):  # one seed: start the hub, send its messages, stop it
                reports.append(await fuzz(seed, PER_SEED, era, work, log))
    failures = [f for r in reports for f in r.failures]
    assert failures == [], "\n".join(failures[:20])
    assert all(r.hub_alive for r in reports)
    assert sum(r.messages for r in reports) == len(SEEDS) * PER_SEED
    assert all(r.rss_after_mb - r.rss_before_mb < RSS_GROWTH_BOUND_MB for r in reports), \
        [(r.rss_before_mb, r.rss_after_mb) for r in reports]


def answer(line: bytes | None) -> dict | None:
    return json.loads(line) if line else None


def test_invalid_json_gets_a_parse_error_with_id_null():
    got = answer(reject(b'{"jsonrpc":"2.0","id":4,"method":"pi'))
    assert got["id"] is None and got["error"]["code"] == -32700
    assert "one JSON-RPC message per line" in got["error"]["message"]


def test_invalid_utf8_gets_a_parse_error_with_id_null():
    assert answer(reject(b'{"jsonrpc":"2.0","id":4,"method":"\xff"}'))["error"]["code"] == -32700


def test_a_request_with_a_readable_id_gets_invalid_request_with_that_id_and_the_reason():
    got = answer(reject(b'{"jsonrpc":"1.0","id":"a7","method":"ping"}'))
    assert got == {"jsonrpc": "2.0", "id": "a7",
                   "error": {"code": -32600, "message": 'Invalid request: "jsonrpc" must be "2.0"'}}


def test_batches_and_non_objects_get_invalid_request_with_id_null():
    for line in (b"[]", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', b"3", b"null"):
        got = answer(reject(line))
        assert got["id"] is None and got["error"]["code"] == -32600, line


def test_notifications_and_stray_responses_are_never_answered():
    assert reject(b'{"jsonrpc":"2.0","method":"notifications/x","params":7}') is None
    assert reject(b'{"jsonrpc":"2.0","id":3,"result":[]}') is None
    assert screen(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"t":"\\udc00"}}') == b""


def test_a_request_whose_id_is_unusable_is_answered_not_taken_for_a_notification():
    got = answer(misread_request(b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}'))
    assert got["id"] is None and got["error"]["message"] == 'Invalid request: "id" must be a string or an integer'
    assert misread_request(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}') is None


def test_a_lone_surrogate_is_refused_with_the_request_id_but_escaped_pairs_pass():
    got = answer(screen(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a\\ud800"}}'))
    assert got["id"] == 9 and got["error"]["code"] == -32602 and "lone UTF-16 surrogate" in got["error"]["message"]
    assert screen(b'{"jsonrpc":"2.0","id":9,"method":"x","params":{"t":"\\ud83d\\ude00 \\\\ud800"}}') is None


def test_a_message_nested_deeper_than_the_limit_is_refused_with_its_id():
    def nested(depth: int) -> bytes:
        return b'{"jsonrpc":"2.0","id":2,"method":"x","params":' + b"[" * depth + b"]" * depth + b"}"

    assert screen(nested(MAX_NESTING - 1)) is None
    got = answer(screen(nested(MAX_NESTING + 5)))
    assert got["id"] == 2 and f"nested deeper than {MAX_NESTING} levels" in got["error"]["message"]
    brackets_in_strings = b'{"jsonrpc":"2.0","id":2,"method":"x","params":{"t":"' + b"[" * 500 + b'"}}'
    assert screen(brackets_in_strings) is None


@pytest.mark.slow
async def test_a_second_request_reusing_an_id_in_flight_in_a_session_is_refused_and_the_first_still_answers(tmp_path):
    """The SDK would route both answers to one stream, leaving the first caller waiting forever."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": ERAS[0]}

    def request(msg_id: int, method: str, params: dict | None = None) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params else {})
                           }).encode()

    async with served_hub({"mcpServers": {"toy": toy()}}, tmp_path) as url, httpx2.AsyncClient(timeout=20) as http:
        init = await http.post(url, headers=headers, content=request(0, "initialize", {
            "protocolVersion": ERAS[0], "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        headers["Mcp-Session-Id"] = init.headers["mcp-session-id"]
        await http.post(url, headers=headers, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

        async def listed() -> bool:  # settled is not READY: a child slow to start under load joins later
            listing = await http.post(url, headers=headers, content=request(1, "tools/list"))
            return '"toy_sleep"' in listing.text

        await until(listed, timeout=30)
        call = request(5, "tools/call", {"name": "toy_sleep", "arguments": {"seconds": 1}, "_meta": {"progressToken": 1}})
        with anyio.fail_after(15):
            async with http.stream("POST", url, headers=headers, content=call) as slow:
                lines = slow.aiter_lines()
                while not (await anext(lines)).startswith("data:"):  # its progress: the call is in flight
                    pass
                second = await http.post(url, headers=headers, content=request(5, "ping"))
                rest = "\n".join([line async for line in lines])
        again = await http.post(url, headers=headers, content=request(5, "ping"))
    assert second.status_code == 400
    assert second.json() == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "Invalid request: id 5 "
                             "is already used by a request in flight in this session; use a new id"}}
    assert slow.status_code == 200 and '"id":5' in rest and "slept 1" in rest
    assert again.status_code == 200 and '"result":{}' in again.text
