"""Masking benchmark (issue 22, section 1): how well ``guards.mask``'s detectors find what they should,
leave what they should not, and what the mask step costs a call.

    python -m bench.masking [--quick]

**Accuracy.** A labelled sample written for this: sentences that each hold one value a detector should
find (phones in international, Chinese mobile and landline, and US formats; Chinese resident ID numbers
with their check digit; card numbers that pass Luhn, with and without separators; emails; IPv4 and IPv6
addresses; API keys and bearer tokens) or one it should leave (dates, timestamps, order and tracking
numbers, versions, ISBNs, ID numbers with a wrong check digit, 16 digits failing Luhn, times, MAC
addresses, UUIDs, prices, coordinates). Printed per detector: values found, missed, and false positives
(something masked as that kind in a sentence labelled otherwise), with the sentences it got wrong.

**Cost.** The mask step around a result of 1 KB to 1 MB of mixed text (a value to mask every ~200
characters), against the same pipeline with no step (the baseline, measured in the same run): the
median time per call, and the ratio.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import mcp.types as types

from bench import run_alone
from hermes_hub.infra.call import CallContext, Identity
from hermes_hub.infra.config.guard_rules import DETECTORS, MaskSection
from hermes_hub.core.pipeline import Call, Pipeline
from hermes_hub.core.pipeline.detectors import Redactor
from hermes_hub.core.pipeline.mask import MaskStep

RESULTS = Path(__file__).resolve().parent / "results"
_W = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_id(region: str, born: str, seq: str, valid: bool = True) -> str:
    body = region + born + seq
    check = "10X98765432"[sum(int(d) * w for d, w in zip(body, _W, strict=True)) % 11]
    if not valid:
        check = "10X98765432"[("10X98765432".index(check) + 3) % 11]
    return body + check


def luhn(prefix: str, length: int, valid: bool = True) -> str:
    rng = random.Random(prefix + str(length))
    body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
    for d in "0123456789":
        n = body + d
        total = sum((int(c) * (2 if i % 2 else 1)) - (9 if int(c) * (2 if i % 2 else 1) > 9 else 0)
                    for i, c in enumerate(reversed(n)))
        if (total % 10 == 0) == valid:
            return n
    raise AssertionError("unreachable")


def spaced(number: str, sep: str = " ") -> str:
    return sep.join(number[i:i + 4] for i in range(0, len(number), 4))


POSITIVES: list[tuple[str, str]] = [
    ("phone", "Call me on +86 138 1234 5678 tomorrow."), ("phone", "手机: 13912345678，请回电"),
    ("phone", "Mobile 186-1234-5678 (work)."), ("phone", "Reach the desk at +44 20 7946 0958."),
    ("phone", "US office: (415) 555-2671."), ("phone", "Fax 212-555-0143 is gone."),
    ("phone", "Landline 010-62345678 in Beijing."), ("phone", "Shenzhen office 0755-86123456."),
    ("phone", "WhatsApp +1 650 253 0000 any time."), ("phone", "Call +49 30 901820 for Berlin."),
    ("phone", "Her number: 15012345678."), ("phone", "Dial +33 1 42 68 53 00 from abroad."),
    ("cn_id", f"ID {cn_id('110105', '19491231', '002')} on file."),
    ("cn_id", f"身份证号码：{cn_id('440305', '19900307', '123')}。"),
    ("cn_id", f"Resident id {cn_id('320102', '20010215', '451')} checked."),
    ("cn_id", f"{cn_id('510104', '19851120', '007')} is the number."),
    ("card", f"Visa {luhn('4', 16)} expires 09/28."), ("card", f"Card: {spaced(luhn('5', 16))}."),
    ("card", f"Amex {luhn('37', 15)} on file."), ("card", f"UnionPay {spaced(luhn('62', 16), '-')} paid."),
    ("card", f"Card number {spaced(luhn('4', 16))} and CVV hidden."), ("card", f"Paid with {luhn('6011', 16)}."),
    ("email", "Write to ann.lee@example.com today."), ("email", "cc: Bob_Smith+news@mail.example.co.uk"),
    ("email", "邮箱 zhang.wei@example.cn 已验证"), ("email", "<ops-team@corp.example.org>"),
    ("ip", "Login from 192.168.1.20 at night."), ("ip", "Server 10.0.0.1 is down."),
    ("ip", "Client ip=203.0.113.45; port 443."), ("ip", "IPv6 2001:db8::ff00:42:8329 seen."),
    ("ip", "Link-local fe80::1ff:fe23:4567:890a on eth0."), ("ip", "Full 2001:0db8:85a3:0000:0000:8a2e:0370:7334."),
    ("api_key", "key sk-proj-Q2x9Lm4Rt8Vb6Nc1Zp0Ws in the env."), ("api_key", "token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("api_key", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2ln"),
    ("api_key", "AWS AKIAIOSFODNN7EXAMPLE leaked."), ("api_key", "Slack xoxb-123456789012-abcdefABCDEF"),
]
NEGATIVES: list[str] = [
    "Meeting on 2026-01-15 at 14:30:00.", "Timestamp 20260115123045 logged.", "Unix time 1767225600.",
    "Order 20261201123 shipped.", "Order number ORD-2026-000123.", "Tracking 1Z999AA10123456784.",
    "Version 2.10.3 released.", "Upgrade from v1.2.3.4 to 1.2.3.5.", "Build 10.0.19045.3803 of Windows.",
    "ISBN 978-7-111-12345-6 in stock.", "ISBN-13: 9780306406157.", "Price ¥1,234,567.89 total.",
    f"Bad id {cn_id('110105', '19491231', '002', valid=False)} rejected.", "Eighteen digits 123456789012345678.",
    f"Not a card {luhn('4', 16, valid=False)}.", "Invoice 4000 1234 5678 9011 is wrong.",
    "At 12:30:45 the job ran.", "MAC 00:1a:2b:3c:4d:5e on the switch.",
    "UUID 123e4567-e89b-12d3-a456-426614174000.", "Commit 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "Coordinates 39.9042, 116.4074.", "Ratio 3.14159265 approx.", "Room 1203, floor 12, building 7.",
    "Page 10-12 of chapter 3.", "Score 1234-5678 in the final.", "Dates 2026/01/15 and 15.01.2026.",
    "Postcode 100080, Beijing.", "Batch 2026-11-30-0007 done.", "Serial SN-8842-1190-2231.",
    "Temperature 36.6 and 98.6F.", "Sizes 1920x1080 and 3840x2160.", "Count 1,000,000 rows.",
    "Decimal 10.0.0.0.1 is not an address.", "Year range 1999-2026.", "Quantity 12 345 678 units.",
    "Amount 13812345678.50 CNY.", "Key length 2048 bits, task-abcdefghijklmnopqrstu",
    "Phone extension 1234.", "Local time 2026-12-01T16:05:00+08:00.",
]


def accuracy() -> dict[str, Any]:
    redactor = Redactor(DETECTORS)
    stats = {d: {"found": 0, "missed": 0, "false_positives": 0, "wrong": []} for d in DETECTORS}
    samples = [(k, t) for k, t in POSITIVES] + [(None, t) for t in NEGATIVES]
    for kind, text in samples:
        out = redactor.session().text(text)
        kinds = set(re.findall(r"\[([a-z_]+)#\d+\]", out))
        if kind is not None:
            hit = kind in kinds
            stats[kind]["found" if hit else "missed"] += 1
            if not hit:
                stats[kind]["wrong"].append(f"missed: {text}")
        for other in kinds - {kind}:
            stats[other]["false_positives"] += 1
            stats[other]["wrong"].append(f"false positive: {text} -> {out}")
    return {"samples": len(samples), "positives": len(POSITIVES), "negatives": len(NEGATIVES), "detectors": stats}


def mixed_text(chars: int) -> str:
    rng = random.Random(chars)
    filler = ("order 20261201123 shipped on 2026-01-15, version 2.10.3; the customer asked about delivery and "
              "the invoice again. ")
    values = [t for _, t in POSITIVES] + NEGATIVES
    out: list[str] = []
    size = 0
    while size < chars:
        piece = filler + rng.choice(values) + " "
        out.append(piece)
        size += len(piece)
    return "".join(out)[:chars]


async def cost(quick: bool) -> list[dict[str, Any]]:
    rows = []
    ctx = CallContext(caller=Identity("bench", "user"))
    tool = types.Tool(name="crm_get", input_schema={"type": "object"})
    step = MaskStep(MaskSection(), lambda: None, max_result_bytes=1_000_000)
    for size in (1_000, 10_000, 100_000) if quick else (1_000, 10_000, 100_000, 1_000_000):
        result = types.CallToolResult(content=[types.TextContent(type="text", text=mixed_text(size))])

        async def send() -> types.CallToolResult:
            return result
        reps = max(3, min(200, 2_000_000 // size // (4 if quick else 1)))
        timings = {}
        for name, pipeline in (("baseline", Pipeline()), ("mask", Pipeline([step]))):
            samples = []
            for _ in range(reps):
                call = Call("crm_get", "crm", "get", {}, ctx, tool)
                start = time.perf_counter()
                await pipeline.run(call, send)
                samples.append(time.perf_counter() - start)
            timings[name] = statistics.median(samples)
        masked = sum(call.notes.get("masked", {}).values())
        rows.append({"chars": size, "calls": reps, "baseline_ms": timings["baseline"] * 1000,
                     "mask_ms": timings["mask"] * 1000, "ratio": timings["mask"] / timings["baseline"],
                     "masked_values": masked, "us_per_kb": timings["mask"] * 1e6 / (size / 1000)})
    return rows


def report(acc: dict[str, Any], rows: list[dict[str, Any]], out: Any = sys.stdout) -> None:
    print(f"masking accuracy: {acc['positives']} labelled values, {acc['negatives']} sentences to leave", file=out)
    print(f"  {'detector':<9} {'found':>6} {'missed':>7} {'false+':>7}", file=out)
    for name, s in acc["detectors"].items():
        print(f"  {name:<9} {s['found']:>6} {s['missed']:>7} {s['false_positives']:>7}", file=out)
        for line in s["wrong"]:
            print(f"      {line}", file=out)
    print("mask step cost per call (median; baseline: the pipeline with no step, same run)", file=out)
    for r in rows:
        print(f"  {r['chars']:>9,} chars: {r['mask_ms']:9.3f} ms vs {r['baseline_ms']:.4f} ms "
              f"({r['us_per_kb']:.0f} µs/KB, {r['masked_values']} values masked, {r['calls']} calls)", file=out)


async def run(quick: bool = False) -> dict[str, Any]:
    acc = accuracy()
    rows = await cost(quick)
    report(acc, rows)
    data = {"accuracy": acc, "cost": rows, "quick": quick}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "masking.json").write_text(json.dumps(data, indent=2, ensure_ascii=False))
    return data


def main() -> None:
    run_alone("masking", run, __doc__)


if __name__ == "__main__":
    main()
