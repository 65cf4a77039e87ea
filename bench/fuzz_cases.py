"""The fuzz benchmark's messages and its verdicts (see ``bench/fuzz.py``).

``case(seed, index, era)`` builds one message, always the same bytes for the same three values, so
a failure reproduces from what it prints; ``judge`` says what is wrong with the answers to it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

ERAS = ("2025-11-25", "2026-07-28")
HUGE = 10 * 1024 * 1024  # the "10 MB string"

# What the hub owes a message:
#   "reply"       a response with this message's id (result or error), or an error with id null
#   "error"       an error, with this message's id or id null
#   "null_error"  an error with id null and code -32700 (parse) or -32600 (invalid request)
#   "none"        nothing (a notification, or a response the host sent)
EXPECTS = ("reply", "error", "null_error", "none")


@dataclass(frozen=True)
class Case:
    seed: int
    index: int
    era: str
    kind: str
    data: bytes
    expect: str
    id: Any = None  # the id an answer must carry (``reply``/``error``), when it has a valid one
    method: str | None = None  # for HTTP's routing headers

    @property
    def where(self) -> str:
        return f"seed {self.seed} case {self.index} ({self.era}, {self.kind})"


# -- the generator ----------------------------------------------------------------------------------

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
BASES: list[tuple[str, dict[str, Any] | None]] = [
    ("ping", None),
    ("tools/list", {}),
    ("tools/list", {"cursor": "nope"}),
    ("tools/call", {"name": "echo_echo", "arguments": {"text": "hi"}}),
    ("tools/call", {"name": "hermes_hub_status", "arguments": {}}),
    ("tools/call", {"name": "no_such_tool", "arguments": {}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "hub://hermes/status"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "nope", "arguments": {"a": "b"}}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}}),
    ("resources/subscribe", {"uri": "hub://hermes/status"}),
    ("logging/setLevel", {"level": "debug"}),
]
NOTIFICATIONS = [("notifications/initialized", None), ("notifications/cancelled", {"requestId": 12345}),
                 ("notifications/progress", {"progressToken": "t", "progress": 1}),
                 ("notifications/roots/list_changed", None), ("notifications/whatever", {"x": 1})]
WRONG = [0, -1, 1.5, True, None, [], [1, "a"], {}, {"a": {"b": 1}}, "", "text", 2**70]
KINDS = [  # (kind, weight)
    ("valid", 6), ("truncated", 12), ("invalid_utf8", 8), ("wrong_type", 18), ("unknown_method", 8),
    ("huge_id", 6), ("deep_nesting", 7), ("huge_string", 0.15), ("non_object", 6), ("batch", 3),
    ("missing_field", 6), ("duplicate_keys", 3), ("extra_fields", 4), ("control_chars", 3),
    ("client_response", 4), ("notification", 6),
]


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _request(rng: random.Random, era: str, msg_id: Any) -> tuple[dict[str, Any], str]:
    method, params = rng.choice(BASES)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    params = json.loads(json.dumps(params)) if params is not None else None
    if era == ERAS[1]:
        params = {**(params or {}), "_meta": dict(ENVELOPE)}
    if params is not None:
        msg["params"] = params
    return msg, method


DEEP = "@@deep@@"


def _nested(depth: int) -> bytes:
    """``depth`` levels of alternating objects and arrays around a 1, as JSON text."""
    opening = b"".join(b"[" if i % 2 else b'{"k":' for i in range(depth))
    closing = b"".join(b"]" if i % 2 else b"}" for i in reversed(range(depth)))
    return opening + b"1" + closing


def case(seed: int, index: int, era: str, kind: str | None = None) -> Case:
    """Message ``index`` of ``seed`` for a host of ``era``; ``kind`` forces a kind (else drawn)."""
    rng = random.Random(f"{seed}:{index}:{era}")
    kind = kind or rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
    msg_id: Any = rng.choice([index, f"c{index}", -index - 1])
    msg, method = _request(rng, era, msg_id)

    def made(data: bytes, expect: str, the_id: Any = msg_id, the_method: str | None = method) -> Case:
        return Case(seed, index, era, kind, data, expect, the_id if expect in ("reply", "error") else None, the_method)

    if kind == "valid":
        return made(dumps(msg), "reply")
    if kind == "truncated":
        full = dumps(msg)
        return made(full[:rng.randrange(1, len(full))], "null_error")
    if kind == "invalid_utf8":
        full = bytearray(dumps(msg))
        for _ in range(rng.randint(1, 3)):
            full.insert(rng.randrange(len(full) + 1), rng.choice([0x80, 0xBF, 0xC0, 0xFE, 0xFF]))
        return made(bytes(full), "null_error")
    if kind == "wrong_type":
        path = rng.choice(["jsonrpc", "id", "method", "params", "params.name", "params.arguments", "params.cursor",
                           "params.uri", "params._meta", "params.arguments.text", "params.level"])
        value = rng.choice(WRONG)
        if "." in path:
            msg.setdefault("params", {})[path.split(".", 1)[1].split(".")[0]] = value \
                if path.count(".") == 1 else {"text": value}
            return made(dumps(msg), "reply")
        msg[path] = value
        if path == "id":
            valid = isinstance(value, int | str) and not isinstance(value, bool)
            return made(dumps(msg), "reply" if valid else "null_error" if value is not None else "error", value)
        if path == "params":
            return made(dumps(msg), "reply")
        return made(dumps(msg), "error", the_method=value if isinstance(value, str) else None)
    if kind == "unknown_method":
        name = rng.choice(["", "rpc.discover", "tools/lists", "x" * rng.randint(1, 5000), "méthode/ünïcode",
                           "tools/call/extra", "notifications/initialized/x", "\u0000", "../../etc/passwd"])
        msg["method"] = name
        return made(dumps(msg), "error", the_method=name)
    if kind == "huge_id":
        the_id: Any = rng.choice([int("9" * rng.randint(19, 4000)), -int("9" * rng.randint(19, 300)),
                                  "i" * rng.randint(1000, 200_000), 2**63, -(2**63) - 1])
        msg["id"] = the_id
        return made(dumps(msg), "reply", the_id)
    if kind == "deep_nesting":
        depth = rng.choice([10, 100, 600, 1000, 5000, 100_000])
        where = rng.choice(["params", "arguments", "id"])
        if where == "id":
            msg["id"] = DEEP
        elif where == "params":
            msg["params"] = {"nested": DEEP, **(msg.get("params") or {})}
        else:
            msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo",
                                                   "arguments": {"text": "x", "deep": DEEP}})
        data = dumps(msg).replace(dumps(DEEP), _nested(depth))  # too deep for json.dumps itself
        return made(data, "null_error" if where == "id" else "reply", the_method=msg["method"])
    if kind == "huge_string":
        target = rng.choice(["text", "method", "id", "tool"])
        big = "z" * HUGE
        if target == "method":
            msg["method"] = big
            return made(dumps(msg), "error", the_method=None)
        if target == "id":
            msg["id"] = big
            return made(dumps(msg), "reply", big)
        msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo" if target == "text"
                                                else big, "arguments": {"text": big if target == "text" else "x"}})
        return made(dumps(msg), "reply", the_method="tools/call")
    if kind == "non_object":
        return made(dumps(rng.choice([1, -3.5, "tools/list", None, True, [], {}])), "null_error")
    if kind == "batch":
        return made(dumps([msg, _request(rng, era, msg_id)[0]][: rng.randint(1, 2)]), "null_error")
    if kind == "missing_field":
        drop = rng.choice(["jsonrpc", "method", "id", "params.name", "params"])
        if drop == "id":
            msg.pop("id")
            return made(dumps(msg), "none")
        if drop.startswith("params"):
            if drop == "params":
                msg.pop("params", None)
            else:
                (msg.get("params") or {}).pop("name", None)
            return made(dumps(msg), "reply")
        msg.pop(drop)
        if drop == "method":
            return made(dumps(msg), "error", the_method=None)
        return made(dumps(msg), "error")
    if kind == "duplicate_keys":
        body = dumps(msg)
        return made(b'{"id":' + dumps(rng.choice([[], "dup", 7])) + b"," + body[1:], "reply")
    if kind == "extra_fields":
        msg[rng.choice(["extra", "result", "error", "jsonrpc2", "ID", "Method"])] = rng.choice(WRONG)
        return made(dumps(msg), "reply")  # with a method, a stray "result" or "error" is ignored
    if kind == "control_chars":
        junk = "".join(chr(rng.randrange(0, 32)) for _ in range(rng.randint(1, 40))) + "\ud800\u2028\ufeff"
        msg.update(method="tools/call", params={**(msg.get("params") or {}), "name": "echo_echo",
                                               "arguments": {"text": junk}})
        # escaped (ensure_ascii): the lone surrogate stays valid UTF-8 on the wire
        return made(json.dumps(msg, separators=(",", ":")).encode(), "reply", the_method="tools/call")
    if kind == "client_response":
        if rng.random() < 0.5:
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": rng.choice([{}, {"x": [1]}])}
        else:
            body = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": rng.choice([-32603, 1, 0]), "message": "m"}}
        return made(dumps(body), "none")
    # notification: valid or mutated, never answered
    name, params = rng.choice(NOTIFICATIONS)
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": name}
    if params is not None:
        note["params"] = params if rng.random() < 0.6 else rng.choice(WRONG[:-1])
    return made(dumps(note), "none", the_method=name)


def cases(seed: int, count: int, era: str) -> Iterator[Case]:
    """``count`` messages; the first few of every run include one of each rare kind."""
    forced = ["huge_string", "deep_nesting", "huge_id", "invalid_utf8", "batch"]
    for i in range(count):
        yield case(seed, i, era, forced[i] if i < len(forced) and count >= 50 else None)


# -- judging answers --------------------------------------------------------------------------------


def judge(c: Case, answers: list[Any]) -> str | None:
    """Why ``answers`` (decoded JSON values) are wrong for ``c``, or None if they are right."""
    for a in answers:
        if not isinstance(a, dict) or a.get("jsonrpc") != "2.0" or "id" not in a or ("result" in a) == ("error" in a):
            return f"not a JSON-RPC response: {json.dumps(a)[:300]}"
        if "error" in a:
            err = a["error"]
            if not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
                return f"malformed error object: {json.dumps(a)[:300]}"
    if c.expect == "none":
        return f"answered a message that needs no answer: {json.dumps(answers)[:300]}" if answers else None
    if len(answers) != 1:
        return f"expected one answer, got {len(answers)}: {json.dumps(answers)[:300]}"
    a = answers[0]
    if c.expect == "null_error":
        if a["id"] is not None or "error" not in a or a["error"]["code"] not in (-32700, -32600):
            return f"expected an error with id null (-32700/-32600), got {json.dumps(a)[:300]}"
        return None
    if a["id"] is None:
        return None if "error" in a else f"a result with id null: {json.dumps(a)[:300]}"
    if a["id"] != c.id:
        return f"answer carries id {json.dumps(a['id'])[:80]}, expected {json.dumps(c.id)[:80]}"
    if c.expect == "error" and "error" not in a:
        return f"expected an error, got a result: {json.dumps(a)[:300]}"
    return None
